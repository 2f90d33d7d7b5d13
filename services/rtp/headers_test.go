package rtp_test

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"fieldtap/drivers/wire"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"fieldtap/board/sim/sipgen"
	"fieldtap/drivers/pcapfile"
	"fieldtap/services/netdecode"
	"fieldtap/services/rtp"
	"fieldtap/services/sip"
	"fieldtap/tools/refdata"
)

// TestHeadersOnlyCutsSignalledRTPOnly feeds generated calls through the
// SIP and media analysers as the daemon does, then asks what the
// recorder keeps of each frame: RTP on signalled flows ends at its RTP
// header; SIP, RTCP and everything else is kept whole.
func TestHeadersOnlyCutsSignalledRTPOnly(t *testing.T) {
	media := rtp.NewAnalyser(rtp.Options{})
	st, _ := sip.New(sip.Limits{})
	an := sip.NewAnalyser(st, netdecode.Options{})
	an.SetMediaHook(media)
	var cut, whole, sipWhole int
	err := sipgen.Generate(sipgen.Options{Seed: 3, Start: time.Unix(1_800_000_000, 0), Duration: 60 * time.Second, Calls: 3}, func(p sipgen.Packet) error {
		an.Feed(p.Time, wire.LinkEthernet, p.Data)
		keep := media.HeadersOnly(wire.LinkEthernet, p.Data)
		// gopacket (an independent decoder) says what the frame is; the
		// UDP layer's payload, since it dissects port 5060 as SIP itself.
		pkt := gopacket.NewPacket(p.Data, layers.LinkTypeEthernet, gopacket.Default)
		var payload []byte
		if u, ok := pkt.Layer(layers.LayerTypeUDP).(*layers.UDP); ok {
			payload = u.Payload
		}
		isRTP := rtpLike(payload)
		switch {
		case keep < len(p.Data):
			if !isRTP {
				t.Fatalf("cut a frame that is not RTP to %d bytes: %v", keep, pkt)
			}
			// Ethernet, IPv4, UDP, then the RTP header: 12 bytes plus CSRCs.
			csrc := int(payload[0]&0x0F) * 4
			if want := bytes.Index(p.Data, payload) + 12 + csrc; keep != want {
				t.Fatalf("kept %d bytes of an RTP frame, want %d (through its header)", keep, want)
			}
			cut++
		case isRTP:
			whole++ // before its SDP was seen, or RTCP-muxed
		case sip.LooksLikeSIP(payload):
			sipWhole++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if cut == 0 || sipWhole == 0 || whole > cut/10 {
		t.Errorf("RTP frames cut %d, RTP kept whole %d, SIP kept whole %d", cut, whole, sipWhole)
	}
}

func rtpLike(b []byte) bool { return rtp.LooksLikeRTP(b) && !sip.LooksLikeSIP(b) }

// TestHeadersOnlyOpensTunnels: RTP that remote SPAN carried in VXLAN is
// cut at its RTP header as on the wire itself: every frame tshark
// decodes as RTP in the kernel-made capture (SDP-signalled, 393 of its
// 432 frames), and nothing else.
func TestHeadersOnlyOpensTunnels(t *testing.T) {
	if _, err := exec.LookPath("tshark"); err != nil {
		t.Skip("tshark is not installed: it is the reference for the tunnel capture (.ci/run installs it)")
	}
	path := filepath.Join("..", "netdecode", "testdata", "tunnels", "kernel-vxlan.pcap")
	out, err := exec.Command("tshark", "-r", path, "-Y", "rtp", "-T", "fields", "-e", "frame.number").Output()
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Fields(string(out))
	media := rtp.NewAnalyser(rtp.Options{})
	st, _ := sip.New(sip.Limits{})
	an := sip.NewAnalyser(st, netdecode.Options{})
	an.SetMediaHook(media)
	var got []string
	n := 0
	refdata.EachRecord(t, path, func(rec pcapfile.Record) {
		n++
		an.Feed(rec.Time, rec.Link, rec.Data)
		if media.HeadersOnly(rec.Link, rec.Data) < len(rec.Data) {
			got = append(got, strconv.Itoa(n))
		}
	})
	if len(want) == 0 || !slices.Equal(got, want) {
		t.Errorf("cut %d frames, tshark's RTP frames are %d (cut %v…, tshark %v…)", len(got), len(want), got[:min(5, len(got))], want[:min(5, len(want))])
	}
}
