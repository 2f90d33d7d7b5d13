package rtp

import (
	"net/netip"
	"runtime"
	"testing"
	"time"

	pion "github.com/pion/srtp/v3"

	"fieldtap/services/netdecode"
	"fieldtap/services/sip"
)

// TestMaxBytesDerivesBounds: a byte share gives every table a count bound
// and the whole stays within it.
func TestMaxBytesDerivesBounds(t *testing.T) {
	o := Options{MaxBytes: 8 << 20}
	o.fill()
	if o.MaxStreams < 100 || o.MaxEndpoints < 100 || o.MaxDialogs < 100 {
		t.Errorf("8 MiB derived %d streams, %d endpoints, %d dialogs: too few to be useful", o.MaxStreams, o.MaxEndpoints, o.MaxDialogs)
	}
	if fp := o.Footprint(); fp > o.MaxBytes {
		t.Errorf("footprint %d past MaxBytes %d", fp, o.MaxBytes)
	}
	if d := (Options{}); d.Footprint() <= (Options{MaxBytes: 1 << 20}).Footprint() {
		t.Error("the defaults must not be bounded by a byte share")
	}
}

// feedStreams sends n heuristic streams from src ports 10000+2i, each
// two packets in sequence in each of its intervals' first...intervals.
func feedStreams(a *Analyser, o Options, n, first, intervals int) {
	t0 := time.Unix(1_700_000_000, 0)
	payload := make([]byte, 160)
	dst := netip.MustParseAddrPort("198.51.100.1:20000")
	for s := range n {
		src := netip.AddrPortFrom(netip.MustParseAddr("192.0.2.1"), uint16(10000+2*s))
		for k := first; k < intervals; k++ {
			at := t0.Add(time.Duration(k) * o.Interval)
			for j := range 2 { // two in sequence confirm a heuristic stream
				seq := uint16(2*k + j)
				a.Datagram(&netdecode.Datagram{Time: at, Src: src, Dst: dst, Payload: rtpPacket(0, seq, uint32(seq)*160, uint32(s), payload)})
			}
		}
	}
}

// TestStreamsStayWithinTheirShare fills the streams' share with streams of
// a full interval history, then with short ones, and checks the table
// keeps what the share holds (more short streams than full ones) and
// that the heap grew no more than the streams are charged.
func TestStreamsStayWithinTheirShare(t *testing.T) {
	for _, tc := range []struct {
		name      string
		intervals int // per stream
	}{{"full", DefaultMaxIntervals + 2}, {"short", 3}} {
		t.Run(tc.name, func(t *testing.T) {
			o := Options{MaxBytes: 4 << 20, Heuristic: true}
			o.fill()
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			a := NewAnalyser(o)
			// Enough streams to fill the share at the least a stream of
			// this length weighs, and a few more.
			n := int(o.streamShare/weightOf(0)) + 20
			if tc.name == "full" {
				n = int(o.streamShare/weightOf(uint64(o.MaxIntervals))) + 20
			}
			feedStreams(a, o, n, 0, tc.intervals)
			runtime.GC()
			runtime.ReadMemStats(&after)
			heap := float64(after.HeapAlloc) - float64(before.HeapAlloc)
			u := a.Usage()
			charged := float64(analyserBytes()) + float64(a.streams.bytes)
			t.Logf("%d streams of %d intervals sent, %d kept (%d evicted): heap grew %.0f bytes, charged %.0f; share %d, %d streams at their fullest",
				n, tc.intervals, u.Streams, a.st.StreamsEvicted, heap, charged, o.streamShare, o.streamShare/int64(streamBytes(o)))
			if a.streams.bytes > o.streamShare {
				t.Errorf("streams charged %d past their share %d", a.streams.bytes, o.streamShare)
			}
			if a.st.StreamsEvicted == 0 || u.Streams+int(a.st.StreamsEvicted) != n {
				t.Errorf("%d kept and %d evicted of %d streams: the share never filled, or a stream went uncounted", u.Streams, a.st.StreamsEvicted, n)
			}
			if heap > charged || heap < charged*0.7 {
				t.Errorf("the streams grew the heap by %.0f bytes; they are charged %.0f", heap, charged)
			}
			if tc.name == "short" && int64(u.Streams) < 3*o.streamShare/int64(streamBytes(o)) {
				t.Errorf("%d short streams kept: not three times the %d full ones the share holds", u.Streams, o.streamShare/int64(streamBytes(o)))
			}
			runtime.KeepAlive(a)
		})
	}
}

// TestGrowingStreamsEvictTheOldest: streams charged little when they
// start grow their interval rings past the share; the oldest go, counted,
// and the charges stay within the share.
func TestGrowingStreamsEvictTheOldest(t *testing.T) {
	o := Options{MaxBytes: 1 << 20, Heuristic: true}
	o.fill()
	a := NewAnalyser(o)
	full := int(o.streamShare / weightOf(uint64(o.MaxIntervals)))
	n := 3 * full
	feedStreams(a, o, n, 0, 1)
	if got := a.Usage().Streams; got != n || a.st.StreamsEvicted != 0 {
		t.Fatalf("%d one-interval streams: %d kept, %d evicted; want every one kept", n, got, a.st.StreamsEvicted)
	}
	feedStreams(a, o, n, 1, DefaultMaxIntervals+2)
	u, st := a.Usage(), a.st
	if a.streams.bytes > o.streamShare {
		t.Errorf("streams charged %d past their share %d", a.streams.bytes, o.streamShare)
	}
	if sum := keptWeight(a); sum != a.streams.bytes {
		t.Errorf("the kept streams and their order weigh %d; the table says %d", sum, a.streams.bytes)
	}
	if u.Streams > full+1 || st.StreamsEvicted == 0 {
		t.Errorf("grown to full: %d streams kept (%d evicted); the share holds %d full ones", u.Streams, st.StreamsEvicted, full)
	}
}

// TestSRTPStateWithinFootprint keys a thousand SRTP streams and checks the
// heap grew, beyond the same streams in clear RTP, no more than srtpBytes
// each.
func TestSRTPStateWithinFootprint(t *testing.T) {
	key := keyOf(1)
	protect := pionProtect(t, key, pion.ProtectionProfileAes128CmHmacSha1_80)
	const n = 1000
	grow := func(proto string, attrs []string, enc func([]byte) []byte) (float64, *Analyser) {
		a := NewAnalyser(Options{})
		feedSDP(t, a, "INVITE sip:b@h SIP/2.0", srtpCaller, proto, attrs...)
		var pkts [][]byte
		for s := range n { // one event packet each, at the size bound: the buffer is grown too
			p := rtpPacket(101, 1, 0, uint32(s), append([]byte{1, 0x80, 0, 160}, make([]byte, maxEventPacket-12-4-10)...))
			pkts = append(pkts, enc(p))
		}
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for s, p := range pkts {
			src := netip.AddrPortFrom(netip.MustParseAddr("192.0.2.1"), uint16(10000+2*s))
			a.Datagram(&netdecode.Datagram{Time: time.Unix(1001, 0), Src: src, Dst: srtpCaller, Payload: p})
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		runtime.KeepAlive(pkts)
		return float64(after.HeapAlloc) - float64(before.HeapAlloc), a
	}
	plain, _ := grow("RTP/AVP", nil, clear)
	keyed, a := grow("RTP/SAVP", []string{"crypto:1 AES_CM_128_HMAC_SHA1_80 inline:" + inline(key)}, protect)
	sn := a.Snapshot(false)
	if len(sn.Events) != n {
		t.Fatalf("%d events read, want %d: the streams were not keyed", len(sn.Events), n)
	}
	per := (keyed - plain) / n
	t.Logf("an SRTP stream's key state: %.0f bytes, accounted %d", per, srtpBytes())
	if per > float64(srtpBytes()) || per < float64(srtpBytes())/2 {
		t.Errorf("SRTP state grew the heap by %.0f bytes a stream; the footprint says %d", per, srtpBytes())
	}
}

// TestSignalledStreamsWithinCharges: streams of signalled calls outlive
// their dialogs and endpoints in the analyser's tables, and keep them
// alive; the heap stays within what the analyser is charged.
func TestSignalledStreamsWithinCharges(t *testing.T) {
	o := Options{MaxBytes: 2 << 20, MaxDialogs: 20, MaxEndpoints: 40}
	o.fill()
	calls := 6 * o.MaxDialogs
	type call struct {
		offer, answer sip.Parsed
		port          int
	}
	cs := make([]call, calls)
	for i := range cs {
		id := "a84b4c76e66710" + itoa(1_000_000+i) + "@pc33.example.com"
		cs[i] = call{sdpMessage(t, id, i, false, 10000+2*i), sdpMessage(t, id, i, true, 10000+2*i), 10000 + 2*i}
	}
	payload := make([]byte, 160)
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	a := NewAnalyser(o)
	caller, callee := netip.MustParseAddr("192.0.2.1"), netip.MustParseAddr("198.51.100.1")
	for i, c := range cs {
		at := time.Unix(int64(1000+i), 0)
		a.SIPMessage(sip.Meta{Time: at, Src: netip.AddrPortFrom(caller, 5060)}, &c.offer)
		a.SIPMessage(sip.Meta{Time: at, Src: netip.AddrPortFrom(callee, 5060)}, &c.answer)
		legs := [2][2]netip.AddrPort{
			{netip.AddrPortFrom(callee, uint16(c.port)), netip.AddrPortFrom(caller, uint16(c.port))},
			{netip.AddrPortFrom(caller, uint16(c.port)), netip.AddrPortFrom(callee, uint16(c.port))},
		}
		for l, leg := range legs {
			for k := range 4 * 250 { // 20 s: four intervals
				seq := uint16(k)
				a.Datagram(&netdecode.Datagram{Time: at.Add(time.Duration(k) * 20 * time.Millisecond), Src: leg[0], Dst: leg[1],
					Payload: rtpPacket(0, seq, uint32(seq)*160, uint32(2*i+l), payload)})
			}
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(cs)
	heap := float64(after.HeapAlloc) - float64(before.HeapAlloc)
	u := a.Usage()
	t.Logf("%d calls: %d streams, %d dialogs, %d endpoints kept; heap grew %.0f bytes, charged %.0f (%d of it the signalled streams' dialogs)",
		calls, u.Streams, u.Dialogs, u.Endpoints, heap, float64(u.Bytes), u.Streams*dialogBytes()/2)
	if u.Streams <= 2*u.Dialogs || u.Streams <= u.Endpoints {
		t.Fatalf("%d streams, %d dialogs, %d endpoints: no stream outlived its dialog and endpoint", u.Streams, u.Dialogs, u.Endpoints)
	}
	if heap > float64(u.Bytes) {
		t.Errorf("the analyser grew the heap by %.0f bytes; it is charged %d", heap, u.Bytes)
	}
}

// TestOldestStreamGrowingPastTheShare: streams fill the share to the
// brim, then the oldest grows past it. While the others are live (a
// packet within two intervals of the newest) it is the oldest of live
// streams and goes, its next packet starting it again as the newest;
// once the others have ended, it is spared and the oldest ended one
// goes. Either way the table's charges stay those of what it keeps.
func TestOldestStreamGrowingPastTheShare(t *testing.T) {
	for _, tc := range []struct {
		name string
		next int // the interval the oldest goes on in, the others ending at 16
	}{{"others live", 17}, {"others ended", 40}} {
		t.Run(tc.name, func(t *testing.T) {
			// A share the streams fill with less room left than one step
			// of a ring takes, so the oldest's next step takes them past.
			w, step := weightOf(16), weightOf(24)-weightOf(16) // 16 closed intervals, then 24
			var o Options
			var n int
			for extra := int64(0); ; extra += 97 {
				o = Options{MaxBytes: 1<<20 + extra, Heuristic: true}
				o.fill()
				n = int(o.streamShare / w)
				for int64(n)*w+streamOrderBytes(orderLen(n, o.MaxStreams)) > o.streamShare {
					n--
				}
				if o.streamShare-int64(n)*w-streamOrderBytes(orderLen(n, o.MaxStreams)) < step {
					break
				}
			}
			a := NewAnalyser(o)
			feedStreams(a, o, n, 0, 17)
			if a.st.StreamsEvicted != 0 || a.Usage().Streams != n {
				t.Fatalf("%d streams of 16 intervals: %d kept, %d evicted; want all kept", n, a.Usage().Streams, a.st.StreamsEvicted)
			}
			feedStreams(a, o, 1, tc.next, tc.next+1) // the oldest closes a 17th interval
			oldest := Key{Src: netip.MustParseAddrPort("192.0.2.1:10000"), Dst: netip.MustParseAddrPort("198.51.100.1:20000"), SSRC: 0}
			var keys []Key
			a.streams.each(func(k Key, _ *stream) { keys = append(keys, k) })
			s, _ := a.streams.get(oldest)
			if a.st.StreamsEvicted != 1 || s == nil || keys[len(keys)-1] != oldest {
				t.Fatalf("%d evicted, the oldest kept %v, the order ends at %v; want one evicted and the oldest the newest", a.st.StreamsEvicted, s != nil, keys[len(keys)-1])
			}
			if tc.name == "others live" && (s.packets != 1 || keys[0].Src.Port() != 10002) {
				t.Errorf("the oldest of live streams: %d packets kept of it, the order from %v; want it evicted and started again", s.packets, keys[0])
			}
			if tc.name == "others ended" && (s.packets != 2*17+2 || keys[0].Src.Port() != 10004) {
				t.Errorf("the live oldest among ended streams: %d packets kept of it, the order from %v; want it spared and the next oldest evicted", s.packets, keys[0])
			}
			if sum := keptWeight(a); sum != a.streams.bytes || a.streams.bytes > o.streamShare {
				t.Errorf("the kept streams and their order weigh %d; the table says %d (share %d)", sum, a.streams.bytes, o.streamShare)
			}
		})
	}
}

// keptWeight is what a's kept streams and their order weigh, as their
// shapes and endpoints say now.
func keptWeight(a *Analyser) int64 {
	sum := streamOrderBytes(len(a.streams.order))
	a.streams.each(func(_ Key, s *stream) {
		sum += weightOf(s.shape())
		if s.ep != nil {
			sum += int64(s.ep.weight)
		}
	})
	return sum
}

// orderLen is the length of the streams' order's array for n keys.
func orderLen(n, limit int) int {
	l := 8
	for l < n {
		l *= 2
	}
	return min(l, limit)
}

// TestLiveStreamsOutlastEnded: long calls' streams go on while short
// calls come and go, more of them than the share holds; the long calls'
// streams are never evicted, the ended ones are, counted.
func TestLiveStreamsOutlastEnded(t *testing.T) {
	o := Options{MaxBytes: 1 << 20, Heuristic: true}
	o.fill()
	a := NewAnalyser(o)
	t0 := time.Unix(1_700_000_000, 0)
	payload := make([]byte, 160)
	dst := netip.MustParseAddrPort("198.51.100.1:20000")
	send := func(port int, ssrc uint32, seq uint16, at time.Time) {
		src := netip.AddrPortFrom(netip.MustParseAddr("192.0.2.1"), uint16(port))
		a.Datagram(&netdecode.Datagram{Time: at, Src: src, Dst: dst, Payload: rtpPacket(0, seq, uint32(seq)*160, ssrc, payload)})
	}
	const long, seconds, shortPerSecond, shortLife = 20, 300, 10, 3
	short := 0
	for sec := range seconds {
		at := t0.Add(time.Duration(sec) * time.Second)
		for l := range long { // a packet a second each, two the first second
			send(10000+2*l, uint32(l), uint16(2*sec), at)
			send(10000+2*l, uint32(l), uint16(2*sec+1), at.Add(20*time.Millisecond))
		}
		for i := range shortPerSecond { // each lives shortLife seconds
			id := sec*shortPerSecond + i
			short++
			for k := range 2 * shortLife {
				send(20000+2*(id%20000), uint32(1000+id), uint16(k), at.Add(time.Duration(k)*500*time.Millisecond))
			}
		}
	}
	u := a.Usage()
	kept := 0
	a.streams.each(func(k Key, s *stream) {
		if k.SSRC < long {
			kept++
			if s.packets != 2*seconds {
				t.Errorf("long call %d: %d packets; want %d: it was evicted and started again", k.SSRC, s.packets, 2*seconds)
			}
		}
	})
	t.Logf("%d short calls over %d s: %d streams kept, %d evicted", short, seconds, u.Streams, a.st.StreamsEvicted)
	if kept != long || a.st.StreamsEvicted == 0 || u.Streams+int(a.st.StreamsEvicted) != long+short {
		t.Errorf("%d of %d long calls kept, %d streams kept, %d evicted of %d", kept, long, u.Streams, a.st.StreamsEvicted, long+short)
	}
}

// TestStreamChargedItsEndpoint: a signalled stream is charged the
// endpoint it holds; when a re-INVITE signals its address with a larger
// line, the streams' table is charged the difference at once for each
// stream that holds it, before the stream carries another packet (a
// stream that never does still holds the new session), and not for one
// evicted before; once the endpoints' table has evicted the endpoint,
// the stream, which keeps it, is still charged it.
func TestStreamChargedItsEndpoint(t *testing.T) {
	dst := netip.MustParseAddrPort("192.0.2.2:5000")
	src := netip.MustParseAddrPort("192.0.2.1:4000")
	a := signalled(t, dst, Options{MaxBytes: 8 << 20})
	ep, ok := a.endpoints.get(dst)
	if !ok || ep.weight == 0 {
		t.Fatal("the signalled address has no weighed endpoint")
	}
	send := func(seq uint16, ssrc uint32) {
		a.Datagram(&netdecode.Datagram{Time: time.Unix(1001, int64(seq)), Src: src, Dst: dst, Payload: rtpPacket(0, seq, uint32(seq)*160, ssrc, make([]byte, 160))})
	}
	send(1, 0x1234)
	send(1, 0x5678) // a second stream to the same address: both hold the endpoint
	streams := func() int64 { return keptWeight(a) }
	s, ok := a.streams.get(Key{SSRC: 0x1234, Src: src, Dst: dst})
	if !ok || a.streams.len() != 2 {
		t.Fatal("no streams")
	}
	small := int64(ep.weight)
	if s.charge() != weightOf(s.weighed)+small || a.streams.bytes != streams() || ep.streams != 2 {
		t.Fatalf("stream charged %d with its endpoint's %d (%d streams); table %d, its streams %d", s.charge(), small, ep.streams, a.streams.bytes, streams())
	}
	// A third stream, then the table evicts the oldest (the first).
	send(1, 0x9abc)
	a.streams.evictOldest()
	if _, ok := a.streams.get(s.key); ok || ep.streams != 2 {
		t.Fatalf("the first stream not evicted, or the endpoint counts %d streams, want 2", ep.streams)
	}
	s, _ = a.streams.get(Key{SSRC: 0x5678, Src: src, Dst: dst})
	// The same call's re-INVITE offers the address with a line at the
	// parse's bounds; no packet follows.
	body := maximalSDP(dst.Addr().String(), int(dst.Port()), 7)
	m := sipWithBody(t, "bench", false, body)
	a.SIPMessage(sip.Meta{Time: time.Unix(1002, 0), Src: netip.MustParseAddrPort("192.0.2.9:5060"), Dst: dst}, &m)
	if int64(ep.weight) <= small+4000 {
		t.Fatalf("endpoint weighs %d after a line of 32 formats, %d before", ep.weight, small)
	}
	if s.charge() != weightOf(s.weighed)+int64(ep.weight) || a.streams.bytes != streams() {
		t.Fatalf("after the re-INVITE: stream charged %d with its endpoint's %d; table %d, its streams %d", s.charge(), ep.weight, a.streams.bytes, streams())
	}
	// Other calls push the endpoint out of its table; the streams keep it.
	for i := range 20000 {
		sig := sdpMessage(t, "other-"+itoa(i), i, false, 10000+2*(i%20000))
		a.SIPMessage(sip.Meta{Time: time.Unix(1003, int64(i)), Src: netip.MustParseAddrPort("192.0.2.9:5060")}, &sig)
		if !a.endpoints.keeps(ep) {
			break
		}
	}
	if a.endpoints.keeps(ep) {
		t.Fatal("the endpoint was never evicted")
	}
	send(3, 0x1234) // an SRTP packet (the re-INVITE's line) tried with the dialog, and its keys, gone
	if s.charge() != weightOf(s.weighed)+int64(ep.weight) || a.streams.bytes != streams() || ep.streams != 2 {
		t.Fatalf("the evicted endpoint's stream charged %d, endpoint %d (%d streams); table %d, its streams %d", s.charge(), ep.weight, ep.streams, a.streams.bytes, streams())
	}
}
