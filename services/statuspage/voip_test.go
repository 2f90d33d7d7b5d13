package statuspage

import (
	"encoding/binary"
	"testing"

	"fieldtap/drivers/pcapfile"
	"fieldtap/services/netdecode"
	"fieldtap/services/ports"
	"fieldtap/services/rtp"
	"fieldtap/services/sip"
	"fieldtap/tools/refdata"
)

// udpSrcPort is the UDP source port of an Ethernet/IPv4 frame, or 0.
func udpSrcPort(b []byte) uint16 {
	if len(b) < 14+20+8 || binary.BigEndian.Uint16(b[12:]) != 0x0800 || b[14+9] != 17 {
		return 0
	}
	ihl := int(b[14]&0x0F) * 4
	if len(b) < 14+ihl+2 {
		return 0
	}
	return binary.BigEndian.Uint16(b[14+ihl:])
}

// TestVoIPOnReferenceCapture reads RTP-Protocol.pcap (one answered call,
// RTP both ways: PROVENANCE.md) through the real analysers, then again
// without the RTP 10.33.6.100:6020 sent, which makes the call one-way.
func TestVoIPOnReferenceCapture(t *testing.T) {
	path := refdata.File(t, "sip", "RTP-Protocol.pcap")
	const callID = "1907983263271201083544@10.33.6.101"
	tests := []struct {
		name       string
		drop       uint16 // UDP source port left out
		wantOneWay int
		wantMOS    int // streams with a grounded MOS
	}{
		{name: "both directions", wantOneWay: 0, wantMOS: 2},
		{name: "one direction lost", drop: 6020, wantOneWay: 1, wantMOS: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			store, _ := sip.New(sip.Limits{})
			an := sip.NewAnalyser(store, netdecode.Options{})
			media := rtp.NewAnalyser(rtp.Options{})
			an.SetMediaHook(media)
			refdata.EachRecord(t, path, func(r pcapfile.Record) {
				if tc.drop == 0 || udpSrcPort(r.Data) != tc.drop {
					an.Feed(r.Time, r.Link, r.Data)
				}
			})
			st := Build(Sources{Ports: fakePorts{st: []ports.Status{{Name: "span0", Kind: "ethernet"}}}, Calls: store, Media: media}, t0)
			v := st.VoIP
			if v == nil {
				t.Fatalf("no VoIP section: %q", st.VoIPReason)
			}
			if v.Calls != 1 || v.Attempts != 1 || v.Answered != 1 || v.ASR == nil || *v.ASR != 1 {
				t.Errorf("calls %d attempts %d answered %d ASR %v, want one answered call, ASR 1", v.Calls, v.Attempts, v.Answered, v.ASR)
			}
			if v.MOS.Streams != tc.wantMOS {
				t.Errorf("MOS population %d, want %d", v.MOS.Streams, tc.wantMOS)
			}
			n := 0
			for _, b := range v.MOS.Bands {
				n += b.Streams
			}
			if n != v.MOS.Streams {
				t.Errorf("bands hold %d streams, population says %d", n, v.MOS.Streams)
			}
			if v.OneWayCount != tc.wantOneWay || (tc.wantOneWay == 1 && (len(v.OneWay) != 1 || v.OneWay[0] != callID)) {
				t.Errorf("one-way %d %v, want %d (%s)", v.OneWayCount, v.OneWay, tc.wantOneWay, callID)
			}
		})
	}
}
