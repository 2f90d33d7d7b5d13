package rtp

import (
	"encoding/binary"
	"net/netip"
	"strconv"
	"syscall"
	"testing"
	"time"

	"fieldtap/services/netdecode"
	"fieldtap/services/sip"
)

// signalled returns an analyser that expects media at dst (a PCMU offer).
func signalled(tb testing.TB, dst netip.AddrPort, o Options) *Analyser {
	tb.Helper()
	a := NewAnalyser(o)
	body := "v=0\r\no=- 1 1 IN IP4 " + dst.Addr().String() + "\r\nc=IN IP4 " + dst.Addr().String() + "\r\nt=0 0\r\nm=audio " +
		itoa(int(dst.Port())) + " RTP/AVP 0 101\r\na=rtpmap:101 telephone-event/8000\r\n"
	raw := "INVITE sip:b@h SIP/2.0\r\nVia: SIP/2.0/UDP h;branch=z9hG4bK1\r\nFrom: <sip:a@h>;tag=1\r\nTo: <sip:b@h>\r\nCall-ID: bench\r\nCSeq: 1 INVITE\r\nContent-Type: application/sdp\r\nContent-Length: " + itoa(len(body)) + "\r\n\r\n" + body
	var m sip.Parsed
	if err := m.Parse([]byte(raw)); err != nil {
		tb.Fatal(err)
	}
	a.SIPMessage(sip.Meta{Time: time.Unix(1000, 0), Src: netip.MustParseAddrPort("192.0.2.9:5060"), Dst: dst}, &m)
	return a
}

func itoa(n int) string { return strconv.Itoa(n) }

// sdpMessage is an INVITE from 192.0.2.1 (or, resp, its 200 from
// 198.51.100.1) carrying an audio offer (answer) on port, the o= line's
// session id version.
func sdpMessage(tb testing.TB, callID string, version int, resp bool, port int) sip.Parsed {
	host := "192.0.2.1"
	if resp {
		host = "198.51.100.1"
	}
	body := "v=0\r\no=- " + itoa(version) + " 1 IN IP4 " + host + "\r\ns=-\r\nc=IN IP4 " + host + "\r\nt=0 0\r\nm=audio " + itoa(port) +
		" RTP/AVP 0 8 101\r\na=rtpmap:0 PCMU/8000\r\na=rtpmap:8 PCMA/8000\r\na=rtpmap:101 telephone-event/8000\r\na=fmtp:101 0-15\r\na=ptime:20\r\na=sendrecv\r\n"
	return sipWithBody(tb, callID, resp, body)
}

// sipWithBody is an INVITE (or, resp, its 200) of Call-ID callID
// carrying body.
func sipWithBody(tb testing.TB, callID string, resp bool, body string) sip.Parsed {
	start := "INVITE sip:b@h SIP/2.0\r\n"
	if resp {
		start = "SIP/2.0 200 OK\r\n"
	}
	raw := start + "Via: SIP/2.0/UDP h;branch=z9hG4bK1\r\nFrom: <sip:a@h>;tag=1\r\nTo: <sip:b@h>\r\nCall-ID: " + callID + "\r\nCSeq: 1 INVITE\r\nContent-Type: application/sdp\r\nContent-Length: " +
		itoa(len(body)) + "\r\n\r\n" + body
	var m sip.Parsed
	if err := m.Parse([]byte(raw)); err != nil {
		tb.Fatal(err)
	}
	return m
}

func rtpPacket(pt uint8, seq uint16, ts, ssrc uint32, payload []byte) []byte {
	b := make([]byte, headerLen, headerLen+len(payload))
	b[0], b[1] = 0x80, pt
	binary.BigEndian.PutUint16(b[2:], seq)
	binary.BigEndian.PutUint32(b[4:], ts)
	binary.BigEndian.PutUint32(b[8:], ssrc)
	return append(b, payload...)
}

// BenchmarkAccounting measures the per-packet path a SPAN port runs:
// classify, look the stream up, count sequence, jitter, interval.
func BenchmarkAccounting(b *testing.B) { benchAccounting(b, Options{}) }

// BenchmarkAccountingBudgeted is BenchmarkAccounting under a byte share,
// as fieldtapd runs it: each packet also weighs its stream.
func BenchmarkAccountingBudgeted(b *testing.B) { benchAccounting(b, Options{MaxBytes: 8 << 20}) }

func benchAccounting(b *testing.B, o Options) {
	src, dst := netip.MustParseAddrPort("192.0.2.1:4000"), netip.MustParseAddrPort("192.0.2.2:5000")
	a := signalled(b, dst, o)
	pkt := rtpPacket(0, 0, 0, 0x1234, make([]byte, 160))
	d := netdecode.Datagram{Src: src, Dst: dst, Payload: pkt}
	t0 := time.Unix(2000, 0)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		binary.BigEndian.PutUint16(pkt[2:], uint16(i))
		binary.BigEndian.PutUint32(pkt[4:], uint32(i*160))
		d.Time = t0.Add(time.Duration(i) * 20 * time.Millisecond)
		a.Datagram(&d)
	}
	b.StopTimer()
	if sn := a.Snapshot(false); len(sn.Streams) != 1 || sn.Streams[0].Packets != uint64(b.N) {
		b.Fatalf("streams %+v", sn.Streams)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds()/1e6, "Mpkt/s")
}

func TestAccountingAllocs(t *testing.T) {
	src, dst := netip.MustParseAddrPort("192.0.2.1:4000"), netip.MustParseAddrPort("192.0.2.2:5000")
	a := signalled(t, dst, Options{})
	pkt := rtpPacket(0, 0, 0, 0x1234, make([]byte, 160))
	d := netdecode.Datagram{Src: src, Dst: dst, Payload: pkt, Time: time.Unix(2000, 0)}
	a.Datagram(&d) // creates the stream
	i := 1
	allocs := testing.AllocsPerRun(1000, func() {
		binary.BigEndian.PutUint16(pkt[2:], uint16(i))
		binary.BigEndian.PutUint32(pkt[4:], uint32(i*160))
		d.Time = d.Time.Add(20 * time.Millisecond)
		a.Datagram(&d)
		i++
	})
	if allocs != 0 {
		t.Errorf("%.1f allocs per packet, want 0", allocs)
	}
}

func FuzzRTP(f *testing.F) {
	f.Add(rtpPacket(0, 1, 160, 7, make([]byte, 20)))
	f.Add([]byte{0xB3, 0x80, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 9})
	f.Fuzz(func(t *testing.T, b []byte) {
		var h Header
		if h.Decode(b) == nil && !h.Truncated && len(h.Payload) > len(b) {
			t.Fatal("payload longer than packet")
		}
		a := NewAnalyser(Options{Heuristic: true, MaxStreams: 4})
		for i := range 3 {
			a.Datagram(&netdecode.Datagram{Time: time.Unix(int64(i), 0), Src: netip.MustParseAddrPort("10.0.0.1:4000"),
				Dst: netip.MustParseAddrPort("10.0.0.2:4002"), Payload: b})
		}
		a.Snapshot(true)
	})
}

func FuzzRTCP(f *testing.F) {
	sr := []byte{0x81, 200, 0, 12, 0, 0, 0, 1, 1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 9, 0, 0, 0, 10, 0, 0, 0, 11,
		0, 0, 0, 2, 5, 0xFF, 0xFF, 0xFE, 0, 0, 1, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0}
	f.Add(sr)
	f.Add([]byte{0x80, 201, 0, 1, 0, 0, 0, 1})
	f.Fuzz(func(t *testing.T, b []byte) {
		rs, _ := ParseRTCP(b)
		for _, r := range rs {
			if len(r.Blocks) > maxReportBlocks {
				t.Fatalf("%d blocks", len(r.Blocks))
			}
		}
	})
}

func TestParseRTCP(t *testing.T) {
	sr := []byte{0x81, 200, 0, 12, 0, 0, 0, 1, 1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 9, 0, 0, 0, 10, 0, 0, 0, 11,
		0, 0, 0, 2, 5, 0xFF, 0xFF, 0xFE, 0, 0, 1, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0}
	rs, err := ParseRTCP(sr)
	if err != nil || len(rs) != 1 {
		t.Fatalf("%v %v", rs, err)
	}
	r := rs[0]
	if r.Type != "SR" || r.SenderSSRC != 1 || r.PacketCount != 10 || len(r.Blocks) != 1 || r.Blocks[0].CumulativeLost != -2 || r.Blocks[0].FractionLost != 5 || r.Blocks[0].Jitter != 3 {
		t.Errorf("report = %+v", r)
	}
}

// BenchmarkSIPMessageSDP measures the media hook of SIP ingest on calls
// without media: an INVITE offer and its 200 answer per call, each a new
// Call-ID with its own media addresses, through tables that stay full.
func BenchmarkSIPMessageSDP(b *testing.B) { benchSIPMessageSDP(b, 1) }

// BenchmarkSIPMessageSDPRetransmitted is BenchmarkSIPMessageSDP with
// every message sent twice, as a lossy or slow path retransmits them.
func BenchmarkSIPMessageSDPRetransmitted(b *testing.B) { benchSIPMessageSDP(b, 2) }

// benchSIPMessageSDP feeds each message copies times in a row.
func benchSIPMessageSDP(b *testing.B, copies int) {
	const calls = 8192
	msgs := make([]sip.Parsed, 0, 2*calls*copies)
	metas := make([]sip.Meta, 0, 2*calls*copies)
	uac, uas := netip.MustParseAddrPort("192.0.2.1:5060"), netip.MustParseAddrPort("198.51.100.1:5060")
	for i := range calls {
		id := "call-" + itoa(i) + "@bench"
		for _, resp := range []bool{false, true} {
			port := 10000 + 2*(i%20000)
			if resp {
				port += 20000
			}
			m := sdpMessage(b, id, i, resp, port)
			src, dst := uac, uas
			if resp {
				src, dst = uas, uac
			}
			for range copies {
				msgs = append(msgs, m)
				metas = append(metas, sip.Meta{Time: time.Unix(int64(1000+i), 0), Src: src, Dst: dst})
			}
		}
	}
	// Fewer endpoints than the calls signal, so the table evicts as it
	// does on a long capture.
	a := NewAnalyser(Options{MaxEndpoints: calls})
	feedHook(b, a, metas, msgs)
	// After one pass over the messages (two endpoints each) the table has evicted;
	// a single run (make test's -benchtime 1x) only checks the SDP.
	if st := a.Snapshot(false).Stats; st.SDPInvalid != 0 || (b.N >= len(msgs) && st.EndpointsEvicted == 0) {
		b.Fatalf("%d messages: stats %+v", b.N, st)
	}
}

// BenchmarkSIPMessageCall is the media hook on whole calls without
// media, a message at a time: INVITE (offer), 100, 180, 200 (answer),
// ACK, BYE and its 200, most of them bodiless.
func BenchmarkSIPMessageCall(b *testing.B) {
	const calls = 4096
	var msgs []sip.Parsed
	var metas []sip.Meta
	uac, uas := netip.MustParseAddrPort("192.0.2.1:5060"), netip.MustParseAddrPort("198.51.100.1:5060")
	for i := range calls {
		id := "call-" + itoa(i) + "@bench"
		bare := func(start, cseq string) sip.Parsed {
			raw := start + "\r\nVia: SIP/2.0/UDP h;branch=z9hG4bK1\r\nFrom: <sip:a@h>;tag=1\r\nTo: <sip:b@h>;tag=2\r\nCall-ID: " + id +
				"\r\nCSeq: " + cseq + "\r\nContent-Length: 0\r\n\r\n"
			var m sip.Parsed
			if err := m.Parse([]byte(raw)); err != nil {
				b.Fatal(err)
			}
			return m
		}
		port := 10000 + 2*i
		t := time.Unix(int64(1000+i), 0)
		for _, c := range []struct {
			m    sip.Parsed
			resp bool
		}{
			{sdpMessage(b, id, i, false, port), false},
			{bare("SIP/2.0 100 Trying", "1 INVITE"), true},
			{bare("SIP/2.0 180 Ringing", "1 INVITE"), true},
			{sdpMessage(b, id, i, true, port+20000), true},
			{bare("ACK sip:b@h SIP/2.0", "1 ACK"), false},
			{bare("BYE sip:b@h SIP/2.0", "2 BYE"), false},
			{bare("SIP/2.0 200 OK", "2 BYE"), true},
		} {
			src, dst := uac, uas
			if c.resp {
				src, dst = uas, uac
			}
			msgs = append(msgs, c.m)
			metas = append(metas, sip.Meta{Time: t, Src: src, Dst: dst})
		}
	}
	a := NewAnalyser(Options{MaxEndpoints: calls, MaxDialogs: calls / 2})
	feedHook(b, a, metas, msgs)
	if st := a.Snapshot(false).Stats; st.SDPInvalid != 0 {
		b.Fatalf("stats %+v", st)
	}
}

// feedHook hands a's media hook the messages in turn, round and round,
// for the benchmark's loop, and stops its timer after. On a shared
// machine wall time moves with the load; the process's CPU time, the
// collector's included, much less: it is reported too.
func feedHook(b *testing.B, a *Analyser, metas []sip.Meta, msgs []sip.Parsed) {
	b.ReportAllocs()
	n := 0
	cpu0 := processCPU(b)
	for b.Loop() {
		a.SIPMessage(metas[n], &msgs[n])
		n = (n + 1) % len(msgs)
	}
	b.StopTimer()
	b.ReportMetric(float64((processCPU(b)-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
}

// processCPU is the process's user+sys CPU time.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
