package sipgen

import (
	"encoding/binary"
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// rtpPacket is one decoded RTP packet.
type rtpPacket struct {
	at       time.Time
	dst      string // ip:port
	srcPort  uint16
	dstPort  uint16
	marker   bool
	pt       byte
	seq      uint16
	ts, ssrc uint32
	payload  []byte
}

// rtpStreams decodes every non-SIP UDP packet as RTP, keyed by SSRC.
func rtpStreams(t *testing.T, ps []Packet) map[uint32][]rtpPacket {
	t.Helper()
	streams := map[uint32][]rtpPacket{}
	for i, p := range ps {
		pkt := gopacket.NewPacket(p.Data, layers.LayerTypeEthernet, gopacket.Default)
		udp := pkt.Layer(layers.LayerTypeUDP).(*layers.UDP)
		if udp.SrcPort == sipPort {
			continue
		}
		b := udp.Payload
		if len(b) < rtpHeaderLen || b[0] != rtpVersion {
			t.Fatalf("packet %d: not RTP version 2: % x", i, b)
		}
		r := rtpPacket{
			at:      p.Time,
			dst:     fmt.Sprintf("%v:%d", pkt.NetworkLayer().NetworkFlow().Dst(), udp.DstPort),
			srcPort: uint16(udp.SrcPort), dstPort: uint16(udp.DstPort),
			marker: b[1]&rtpMarker != 0, pt: b[1] &^ rtpMarker,
			seq: binary.BigEndian.Uint16(b[2:]), ts: binary.BigEndian.Uint32(b[4:]),
			ssrc: binary.BigEndian.Uint32(b[8:]), payload: b[rtpHeaderLen:],
		}
		streams[r.ssrc] = append(streams[r.ssrc], r)
	}
	return streams
}

func TestRTP(t *testing.T) {
	o := Options{Seed: 21, Start: t0, Duration: 2 * time.Minute, Calls: 12}
	ps := collect(t, o)
	streams := rtpStreams(t, ps)
	const answeredCalls = 6 // half of two blocks of the mix
	if len(streams) != 2*answeredCalls {
		t.Fatalf("%d RTP streams, want %d (two per answered call)", len(streams), 2*answeredCalls)
	}
	offered := sdpMedia(t, ps)
	events := 0
	for ssrc, s := range streams {
		if !offered[s[0].dst] {
			t.Errorf("SSRC %#x sends to %s, which no SDP offered", ssrc, s[0].dst)
		}
		if !s[0].marker || s[0].pt != ptPCMU {
			t.Errorf("SSRC %#x: first packet marker %v type %d, want marked PCMU", ssrc, s[0].marker, s[0].pt)
		}
		first := s[0]
		for i, p := range s {
			if p.srcPort%2 != 0 || p.dstPort%2 != 0 || p.srcPort < rtpPortMin || p.dstPort >= rtpPortMax {
				t.Fatalf("SSRC %#x: ports %d -> %d not even in [%d, %d)", ssrc, p.srcPort, p.dstPort, rtpPortMin, rtpPortMax)
			}
			n := p.seq - first.seq
			if int(n) != i {
				t.Fatalf("SSRC %#x packet %d: seq %d, want %d", ssrc, i, p.seq, first.seq+uint16(i))
			}
			if i > 0 {
				gap := p.at.Sub(s[i-1].at)
				if gap <= ptime-maxJitter || gap >= ptime+maxJitter {
					t.Fatalf("SSRC %#x packet %d: %v after the previous one, want %v ± %v", ssrc, i, gap, ptime, maxJitter)
				}
			}
			switch p.pt {
			case ptPCMU:
				if len(p.payload) != samples || p.ts-first.ts != uint32(i*samples) {
					t.Fatalf("SSRC %#x packet %d: PCMU payload %d bytes, ts +%d; want %d bytes, ts +%d",
						ssrc, i, len(p.payload), p.ts-first.ts, samples, i*samples)
				}
			case ptEvent:
				events++
			default:
				t.Fatalf("SSRC %#x packet %d: payload type %d", ssrc, i, p.pt)
			}
		}
		checkDTMF(t, ssrc, s)
	}
	if events == 0 {
		t.Fatal("no RFC 4733 event packets in two blocks of calls")
	}
}

// checkDTMF checks the RFC 4733 events of one stream: marker on the first
// packet, duration growing by one frame, the end packet sent endCopies times.
func checkDTMF(t *testing.T, ssrc uint32, s []rtpPacket) {
	t.Helper()
	var ev []rtpPacket
	flush := func() {
		if len(ev) == 0 {
			return
		}
		defer func() { ev = nil }()
		if !ev[0].marker || len(ev) < endCopies+1 {
			t.Fatalf("SSRC %#x: event of %d packets, marker %v", ssrc, len(ev), ev[0].marker)
		}
		for i, p := range ev {
			e := p.payload
			dur := int(binary.BigEndian.Uint16(e[2:]))
			end := i >= len(ev)-endCopies
			if len(e) != eventLen || e[0] >= dtmfCodes || e[1]&^eventEnd != eventVolume ||
				(e[1]&eventEnd != 0) != end || p.ts != ev[0].ts ||
				dur != min(i+1, len(ev)-endCopies+1)*samples {
				t.Fatalf("SSRC %#x event packet %d of %d: % x ts %d (first %d)", ssrc, i, len(ev), e, p.ts, ev[0].ts)
			}
		}
	}
	for _, p := range s {
		if p.pt != ptEvent {
			flush()
			continue
		}
		if len(ev) > 0 && p.ts != ev[0].ts {
			flush()
		}
		ev = append(ev, p)
	}
	flush()
}

var mLine = regexp.MustCompile(`c=IN IP4 (\S+)\r\n(?s:.*)m=audio (\d+) `)

// sdpMedia lists the ip:port pairs SDP bodies offered or answered.
func sdpMedia(t *testing.T, ps []Packet) map[string]bool {
	t.Helper()
	calls, _ := sipCalls(t, ps)
	m := map[string]bool{}
	for _, ms := range calls {
		for _, msg := range ms {
			if s := mLine.FindSubmatch(msg.body); s != nil {
				m[fmt.Sprintf("%s:%s", s[1], s[2])] = true
			}
		}
	}
	return m
}
