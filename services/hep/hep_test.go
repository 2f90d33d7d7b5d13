package hep

import (
	"context"
	"encoding/json"
	"net"
	"net/netip"
	"regexp"
	"slices"
	"testing"
	"time"

	"fieldtap/drivers/pcapfile"
	"fieldtap/drivers/wire"
	"fieldtap/services/netdecode"
	"fieldtap/services/rtp"
	"fieldtap/services/sip"
	"fieldtap/tools/refdata"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 123456000, time.UTC)

// TestExporterOnReferenceCapture feeds RTP-Protocol.pcap (one call,
// nine SIP messages, two RTCP packets: PROVENANCE.md) through the real
// SPAN analyser with the exporter tapped in, to a UDP socket on
// loopback, and reads every packet back.
func TestExporterOnReferenceCapture(t *testing.T) {
	path := refdata.File(t, "sip", "RTP-Protocol.pcap")
	ln, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	exp, err := New(Options{Collector: ln.LocalAddr().String(), CaptureID: 2001, RTCP: true})
	if err != nil {
		t.Fatal(err)
	}
	store, _ := sip.New(sip.Limits{})
	an := sip.NewAnalyser(store, netdecode.Options{})
	media := rtp.NewAnalyser(rtp.Options{})
	an.SetMediaHook(&Tee{Next: media, Calls: media, Exp: exp})
	an.SetTap(exp)
	// As the daemon feeds: the whole capture one batch, held. The tee's
	// CallOf for each RTCP packet runs inside the hold (a plain lock
	// there would deadlock this test).
	an.Hold()
	refdata.EachRecord(t, path, func(r pcapfile.Record) { an.Feed(r.Time, r.Link, r.Data) })
	an.Release()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go exp.Run(ctx)
	const wantSIP, wantRTCP = 9, 2
	callIDs := map[string]int{}
	var rtcp []wire.HEPMessage
	buf := make([]byte, wire.HEPMaxPacket)
	callID := regexp.MustCompile(`(?mi)^(?:Call-ID|i)\s*:\s*(\S+)`)
	for len(rtcp)+sum(callIDs) < wantSIP+wantRTCP {
		ln.SetReadDeadline(time.Now().Add(10 * time.Second))
		n, _, err := ln.ReadFrom(buf)
		if err != nil {
			t.Fatalf("after %d SIP and %d RTCP: %v (stats %+v)", sum(callIDs), len(rtcp), err, exp.Stats())
		}
		var d wire.HEPMessage
		if err := wire.DecodeHEP(slices.Clone(buf[:n]), &d); err != nil {
			t.Fatal(err)
		}
		switch d.Type {
		case wire.HEPTypeSIP:
			m := callID.FindSubmatch(d.Payload)
			if m == nil {
				t.Fatalf("SIP packet without a Call-ID:\n%s", d.Payload)
			}
			callIDs[string(m[1])]++
		case wire.HEPTypeRTCP:
			rtcp = append(rtcp, d)
		}
	}
	if len(callIDs) != 1 {
		t.Fatalf("Call-IDs %v, want the capture's one", callIDs)
	}
	for id := range callIDs {
		for _, r := range rtcp {
			var j map[string]any
			if err := json.Unmarshal(r.Payload, &j); err != nil {
				t.Fatalf("RTCP payload is not JSON: %s", r.Payload)
			}
			if string(r.Correlation) != id || j["ssrc"] == nil || j["report_blocks"] == nil {
				t.Errorf("RTCP correlation %q payload %s, want %q and HOMER's keys", r.Correlation, r.Payload, id)
			}
		}
	}
	if st := exp.Stats(); st.SIP != wantSIP || st.RTCP != wantRTCP || len(st.Dropped) != 0 {
		t.Errorf("stats %+v", st)
	}
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// TestQueueBound fills the queue with nothing sending: what does not fit
// is counted, and memory stops at the bound.
func TestQueueBound(t *testing.T) {
	exp, err := New(Options{Collector: "127.0.0.1:9", QueuePackets: 4, QueueBytes: wire.HEPMaxPacket})
	if err != nil {
		t.Fatal(err)
	}
	meta := sip.Meta{Time: t0, Src: netip.MustParseAddrPort("192.0.2.1:5060"), Dst: netip.MustParseAddrPort("192.0.2.2:5060"), Transport: sip.TransportUDP}
	for range 10 {
		exp.Message(meta, []byte("OPTIONS sip:a@b SIP/2.0\r\n\r\n"))
	}
	st := exp.Stats()
	if st.Queued != 4 || st.Dropped[DropQueueFull] != 6 || st.SIP != 4 {
		t.Errorf("stats %+v, want 4 queued and 6 dropped queue_full", st)
	}
	big := make([]byte, wire.HEPMaxPacket)
	exp.Message(meta, big)
	if exp.Stats().Dropped[DropTooLarge] != 1 {
		t.Errorf("an oversize message was not counted too_large: %+v", exp.Stats())
	}
}

func TestOptions(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    Options
		ok   bool
	}{
		{name: "defaults", o: Options{Collector: "homer:9060"}, ok: true},
		{name: "no port", o: Options{Collector: "homer"}},
		{name: "queue too small for one packet", o: Options{Collector: "h:1", QueueBytes: 100}},
		{name: "too many packets", o: Options{Collector: "h:1", QueuePackets: MaxQueuePackets + 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.o)
			if (err == nil) != tc.ok {
				t.Errorf("New = %v, want ok %v", err, tc.ok)
			}
		})
	}
}

// FuzzReport feeds sender-written RTCP datagrams to the exporter: every
// packet it queues decodes (wire.DecodeHEP), carries the correlation id and valid JSON.
func FuzzReport(f *testing.F) {
	// An RR with one report block, as RTP-Protocol.pcap's endpoints send.
	f.Add([]byte{0x81, 0xC9, 0x00, 0x07, 0x06, 0xC1, 0x56, 0xFD, 0x44, 0xC6, 0x1A, 0xFB, 0x00, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00})
	f.Add([]byte{0x80, 0xC8, 0x00, 0x06, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0, 5, 0, 0, 0, 6})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		exp, err := New(Options{Collector: "127.0.0.1:9", RTCP: true, QueuePackets: 64})
		if err != nil {
			t.Fatal(err)
		}
		d := netdecode.Datagram{Time: t0, Src: netip.MustParseAddrPort("192.0.2.1:6001"), Dst: netip.MustParseAddrPort("192.0.2.2:7001"), Payload: b}
		exp.report(&d, "call@host")
		for len(exp.q) > 0 {
			var p wire.HEPMessage
			if err := wire.DecodeHEP(<-exp.q, &p); err != nil {
				t.Fatal(err)
			}
			if string(p.Correlation) != "call@host" || p.Type != wire.HEPTypeRTCP || !json.Valid(p.Payload) {
				t.Fatalf("packet %+v", p)
			}
		}
	})
}
