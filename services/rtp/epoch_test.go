package rtp

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"fieldtap/drivers/pcapfile"
	"fieldtap/services/netdecode"
	"fieldtap/services/sip"
	"fieldtap/tools/refdata"
)

// sent is one RTP packet of a test stream: when it arrived (ms after the
// stream's start) and what its header says.
type sent struct {
	at  float64
	seq uint16
	ts  uint32
	pt  uint8
}

// sender lays out a PCMU stream packet by packet, 20 ms apart.
type sender struct {
	at  float64 // when the next packet is due, ms
	seq uint16
	ts  uint32
	ps  []sent
}

func newSender() *sender { return &sender{seq: 1000, ts: 1_000_000} }

// send appends n packets of pt, each late(i) ms after it was due.
func (s *sender) send(n int, pt uint8, late func(i int) float64) *sender {
	for i := range n {
		p := sent{at: s.at, seq: s.seq, ts: s.ts, pt: pt}
		if late != nil {
			p.at += late(i)
		}
		s.ps = append(s.ps, p)
		s.at, s.seq = s.at+20, s.seq+1
		if pt != ptEventTest {
			s.ts += 160
		}
	}
	return s
}

// ptEventTest is signalled's telephone-event type: its packets keep the
// event's start timestamp.
const ptEventTest = 101

func (s *sender) pause(ms float64) *sender  { s.at += ms; return s }
func (s *sender) restart(ts uint32) *sender { s.ts = ts; return s }

// TestTimingSurvivesTimestampReset: a sender that restarts its RTP clock
// but keeps SSRC and sequence (a fax call's T.38 re-INVITEs) starts a new
// timing epoch; before, every later packet was "behind" the old clock and
// max_delta and jitter stopped for the rest of the stream (issue #33).
// What is not a restarted clock keeps today's measurement.
func TestTimingSurvivesTimestampReset(t *testing.T) {
	tests := []struct {
		name      string
		stream    *sender
		epochs    uint64
		maxDelta  float64 // ms
		maxJitter float64 // ms, within 1 %
	}{
		// D = 200 − 20 once: J = 180/16.
		{name: "clock back near 0, then a 200 ms gap", stream: newSender().send(50, 0, nil).restart(160).send(30, 0, nil).pause(180).send(20, 0, nil),
			epochs: 2, maxDelta: 200, maxJitter: 180.0 / 16},
		{name: "clock far ahead is no jitter", stream: newSender().send(50, 0, nil).restart(1<<30).send(50, 0, nil),
			epochs: 2, maxDelta: 20, maxJitter: 0},
		{name: "the restarted packet's own gap counts by arrival", stream: newSender().send(50, 0, nil).pause(280).restart(160).send(50, 0, nil),
			epochs: 2, maxDelta: 300, maxJitter: 0},
		{name: "a late packet from before the restart is no third epoch", stream: func() *sender {
			s := newSender().send(49, 0, nil)
			late := s.send(1, 0, nil).ps[49]
			s.ps = s.ps[:49]
			s.send(1, 0, nil).restart(160).send(1, 0, nil)
			late.at = s.at - 15
			s.ps = append(s.ps, late)
			return s.send(30, 0, nil).pause(180).send(20, 0, nil)
		}(), epochs: 2, maxDelta: 200, maxJitter: 180.0 / 16},
		// The packet 3 frames back is behind (D = 60, J = 60/16), the next
		// one in order 40 ms after the last in order (D = 0).
		{name: "video's frame a few back is late, not a restart", stream: func() *sender {
			s := newSender().send(50, 0, nil)
			base := s.ts
			return s.restart(base-3*160).send(1, 0, nil).restart(base+160).send(49, 0, nil)
		}(), epochs: 1, maxDelta: 40, maxJitter: 60.0 / 16 * 15 / 16},
		{name: "a hold: arrival gap with the clock stopped is jitter", stream: newSender().send(50, 0, nil).pause(1980).send(50, 0, nil),
			epochs: 1, maxDelta: 2000, maxJitter: 1980.0 / 16},
		// The audio after it: D = |20 − 2000|.
		{name: "a 2 s key press: audio after it leads by 2 s, no restart", stream: func() *sender {
			s := newSender().send(50, 0, nil).send(100, ptEventTest, nil)
			return s.restart(s.ts+100*160).send(50, 0, nil)
		}(), epochs: 1, maxDelta: 20, maxJitter: 1980.0 / 16},
	}
	src, dst := netip.MustParseAddrPort("192.0.2.1:4000"), netip.MustParseAddrPort("192.0.2.2:5000")
	t0 := time.Unix(2000, 0)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := signalled(t, dst, Options{})
			for _, p := range tc.stream.ps {
				b := rtpPacket(p.pt, p.seq, p.ts, 0xFA7, make([]byte, 160))
				a.Datagram(&netdecode.Datagram{Time: t0.Add(time.Duration(p.at * float64(time.Millisecond))), Src: src, Dst: dst, Payload: b})
			}
			s := a.Snapshot(false).Streams[0]
			if s.TimingEpochs != tc.epochs || a.TimingEpochs() != tc.epochs-1 {
				t.Errorf("timing epochs %d (restarted %d), want %d", s.TimingEpochs, a.TimingEpochs(), tc.epochs)
			}
			if math.Abs(s.MaxDeltaMs-tc.maxDelta) > 1e-6 {
				t.Errorf("max delta %.3f ms, want %.3f", s.MaxDeltaMs, tc.maxDelta)
			}
			if math.Abs(s.MaxJitterMs-tc.maxJitter) > 0.01*tc.maxJitter+1e-6 {
				t.Errorf("max jitter %.3f ms, want %.3f", s.MaxJitterMs, tc.maxJitter)
			}
		})
	}
}

// TestTimestampResetAgainstTshark writes a call whose callee restarts its
// RTP clock twice (back near 0, then far ahead) and reads the file
// through the analysers. tshark 4.0 stops timing at the first restart as
// fieldtap did (every later packet "behind", the stream flagged), so each
// epoch is cut from the same file with editcap and measured alone: the
// stream's max delta is the largest epoch's or restart gap's, its max
// jitter the largest epoch's (RFC 3550 jitter begins again at a restart).
func TestTimestampResetAgainstTshark(t *testing.T) {
	calm := func(i int) float64 { return float64(i*7919%1000) / 1000 }         // up to 1 ms late
	rough := func(i int) float64 { return float64(i*7919%3000) / 1000 }        // up to 3 ms
	s := newSender().send(100, 0, calm)                                        // frames 3-102
	s.pause(280).restart(160).send(50, 0, rough).pause(180).send(50, 0, rough) // 103-202: back near 0 after 300 ms; a 200 ms gap
	s.restart(1<<30).send(100, 0, calm)                                        // 203-302: far ahead
	ps := s.ps
	epochFrames := []string{"1-2 3-102", "1-2 103-202", "1-2 203-302"}
	restartGaps := []float64{ps[100].at - ps[99].at, ps[200].at - ps[199].at}

	path := filepath.Join(t.TempDir(), "restart.pcap")
	writeRestartCall(t, path, ps)
	a := NewAnalyser(Options{})
	st, err := sip.New(sip.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	sa := sip.NewAnalyser(st, netdecode.Options{})
	sa.SetMediaHook(a)
	refdata.EachRecord(t, path, func(rec pcapfile.Record) { sa.Feed(rec.Time, rec.Link, rec.Data) })
	sn := a.Snapshot(false)
	if len(sn.Streams) != 1 {
		t.Fatalf("%d streams, want the callee's one", len(sn.Streams))
	}
	got := sn.Streams[0]
	if alone := a.Streams(true); len(alone) != 1 || !reflect.DeepEqual(alone, a.Snapshot(true).Streams) {
		t.Errorf("Streams alone %+v, want the snapshot's", alone)
	}
	if got.TimingEpochs != 3 || a.TimingEpochs() != 2 || got.Packets != 300 || got.Lost != 0 {
		t.Errorf("epochs %d (restarted %d), packets %d lost %d: want 3 epochs, 2 restarts, 300 packets, none lost",
			got.TimingEpochs, a.TimingEpochs(), got.Packets, got.Lost)
	}
	for _, tool := range []string{"tshark", "editcap"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not on PATH (apt-get install tshark): the comparison with tshark is skipped; fieldtap: max delta %.3f ms, max jitter %.3f ms",
				tool, got.MaxDeltaMs, got.MaxJitterMs)
		}
	}
	whole := tsharkStream(t, path)
	t.Logf("tshark on the whole file: max delta %.3f ms, max jitter %.3f ms, problem flagged %v", whole.maxDelta, whole.maxJitter, whole.problem)
	wantDelta, wantJitter := max(restartGaps[0], restartGaps[1]), 0.0
	for i, frames := range epochFrames {
		cut := filepath.Join(t.TempDir(), fmt.Sprintf("epoch%d.pcap", i+1))
		if out, err := exec.Command("editcap", append([]string{"-r", path, cut}, strings.Fields(frames)...)...).CombinedOutput(); err != nil {
			t.Fatalf("editcap: %v\n%s", err, out)
		}
		e := tsharkStream(t, cut)
		t.Logf("epoch %d alone: max delta %.3f ms, max jitter %.3f ms", i+1, e.maxDelta, e.maxJitter)
		wantDelta, wantJitter = max(wantDelta, e.maxDelta), max(wantJitter, e.maxJitter)
	}
	t.Logf("fieldtap: max delta %.3f ms, max jitter %.3f ms, %d timing epochs", got.MaxDeltaMs, got.MaxJitterMs, got.TimingEpochs)
	if math.Abs(got.MaxDeltaMs-wantDelta) > 0.001 { // tshark prints µs
		t.Errorf("max delta %.3f ms, tshark's epochs and restart gaps %.3f", got.MaxDeltaMs, wantDelta)
	}
	if math.Abs(got.MaxJitterMs-wantJitter) > max(jitterTolerance*wantJitter, jitterFloorMs) {
		t.Errorf("max jitter %.3f ms, tshark's epochs %.3f", got.MaxJitterMs, wantJitter)
	}
}

// writeRestartCall writes an INVITE from 192.0.2.1 offering PCMU at
// :4000, its 200 OK from 192.0.2.2 answering at :5000, then the callee's
// RTP, ps, to the caller.
func writeRestartCall(t *testing.T, path string, ps []sent) {
	t.Helper()
	caller, callee := netip.MustParseAddr("192.0.2.1"), netip.MustParseAddr("192.0.2.2")
	msg := func(start, tag string, ip netip.Addr, port int) string {
		body := fmt.Sprintf("v=0\r\no=- 1 1 IN IP4 %s\r\ns=-\r\nc=IN IP4 %s\r\nt=0 0\r\nm=audio %d RTP/AVP 0\r\n", ip, ip, port)
		return start + "\r\nVia: SIP/2.0/UDP 192.0.2.1:5060;branch=z9hG4bKrestart\r\nFrom: <sip:fax@192.0.2.1>;tag=1\r\nTo: <sip:gw@192.0.2.2>" + tag +
			"\r\nCall-ID: restart\r\nCSeq: 1 INVITE\r\nContent-Type: application/sdp\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
	}
	t0 := time.Date(2026, 12, 4, 9, 0, 0, 0, time.UTC)
	var buf bytes.Buffer
	w := pcapgo.NewWriter(&buf)
	if err := w.WriteFileHeader(65535, layers.LinkTypeEthernet); err != nil {
		t.Fatal(err)
	}
	write := func(at time.Time, src, dst netip.AddrPort, payload []byte) {
		f := udpFrame(t, src, dst, payload)
		if err := w.WritePacket(gopacket.CaptureInfo{Timestamp: at, CaptureLength: len(f), Length: len(f)}, f); err != nil {
			t.Fatal(err)
		}
	}
	sipA, sipB := netip.AddrPortFrom(caller, 5060), netip.AddrPortFrom(callee, 5060)
	write(t0, sipA, sipB, []byte(msg("INVITE sip:gw@192.0.2.2 SIP/2.0", "", caller, 4000)))
	write(t0.Add(100*time.Millisecond), sipB, sipA, []byte(msg("SIP/2.0 200 OK", ";tag=2", callee, 5000)))
	for _, p := range ps {
		b := make([]byte, 12+160)
		b[0], b[1] = 0x80, p.pt
		binary.BigEndian.PutUint16(b[2:], p.seq)
		binary.BigEndian.PutUint32(b[4:], p.ts)
		binary.BigEndian.PutUint32(b[8:], 0xFA7)
		write(t0.Add(200*time.Millisecond+time.Duration(p.at*float64(time.Millisecond))), netip.AddrPortFrom(callee, 5000), netip.AddrPortFrom(caller, 4000), b)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func udpFrame(t *testing.T, src, dst netip.AddrPort, payload []byte) []byte {
	t.Helper()
	eth := &layers.Ethernet{SrcMAC: net.HardwareAddr{2, 0, 0, 0, 0, 1}, DstMAC: net.HardwareAddr{2, 0, 0, 0, 0, 2}, EthernetType: layers.EthernetTypeIPv4}
	ip := &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolUDP, SrcIP: src.Addr().AsSlice(), DstIP: dst.Addr().AsSlice()}
	udp := &layers.UDP{SrcPort: layers.UDPPort(src.Port()), DstPort: layers.UDPPort(dst.Port())}
	if err := udp.SetNetworkLayerForChecksum(ip); err != nil {
		t.Fatal(err)
	}
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, eth, ip, udp, gopacket.Payload(payload)); err != nil {
		t.Fatal(err)
	}
	return bytes.Clone(buf.Bytes())
}

// tsharkRow is one stream of tshark -z rtp,streams.
type tsharkRow struct {
	maxDelta, maxJitter float64 // ms
	problem             bool    // tshark's "Problems?" mark
}

// tsharkStream returns the one stream tshark finds in path.
func tsharkStream(t *testing.T, path string) tsharkRow {
	t.Helper()
	var stderr bytes.Buffer
	cmd := exec.Command("tshark", "-n", "-q", "-r", path, "-z", "rtp,streams")
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("tshark: %v\n%s", err, stderr.String())
	}
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		if len(f) < 12 || !strings.HasPrefix(f[6], "0x") {
			continue
		}
		// … Max Delta, Min Jitter, Mean Jitter, Max Jitter[, X]
		var r tsharkRow
		if r.problem = f[len(f)-1] == "X"; r.problem {
			f = f[:len(f)-1]
		}
		d, err1 := strconv.ParseFloat(f[len(f)-4], 64)
		j, err2 := strconv.ParseFloat(f[len(f)-1], 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("tshark row %q", line)
		}
		r.maxDelta, r.maxJitter = d, j
		return r
	}
	t.Fatalf("no RTP stream in tshark's answer:\n%s", out)
	return tsharkRow{}
}
