package rtp

import (
	"net/netip"
	"runtime"
	"testing"
	"time"

	pion "github.com/pion/srtp/v3"

	"fieldtap/services/netdecode"
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

// TestFullStreamsStayWithinFootprint fills every stream the bound allows
// with a full interval history and checks the heap grew no more than the
// footprint says a stream costs.
func TestFullStreamsStayWithinFootprint(t *testing.T) {
	o := Options{MaxBytes: 4 << 20, Heuristic: true}
	o.fill()
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	a := NewAnalyser(o)
	t0 := time.Unix(1_700_000_000, 0)
	payload := make([]byte, 160)
	dst := netip.MustParseAddrPort("198.51.100.1:20000")
	for s := range o.MaxStreams {
		src := netip.AddrPortFrom(netip.MustParseAddr("192.0.2.1"), uint16(10000+2*s))
		for k := range o.MaxIntervals + 2 {
			at := t0.Add(time.Duration(k) * o.Interval)
			for j := range 2 { // two in sequence confirm a heuristic stream
				seq := uint16(2*k + j)
				a.Datagram(&netdecode.Datagram{Time: at, Src: src, Dst: dst, Payload: rtpPacket(0, seq, uint32(seq)*160, uint32(s), payload)})
			}
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	heap := float64(after.HeapAlloc - before.HeapAlloc)
	streams := float64(analyserBytes()) + float64(o.MaxStreams)*float64(streamBytes(o))
	t.Logf("%d streams of %d intervals: heap grew %.0f bytes, accounted %.0f (%d each)", o.MaxStreams, o.MaxIntervals, heap, streams, streamBytes(o))
	if heap > streams || heap < streams*0.7 {
		t.Errorf("full streams grew the heap by %.0f bytes; the footprint says %.0f", heap, streams)
	}
	runtime.KeepAlive(a)
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
