package canbus

import (
	"runtime"
	"testing"
	"time"

	"fieldtap/drivers/wire"
)

func heapGrowth(fill func()) float64 {
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fill()
	runtime.GC()
	runtime.ReadMemStats(&after)
	return float64(after.HeapAlloc) - float64(before.HeapAlloc)
}

// TestAccountedBytesMatchTheHeap checks the two figures the memory
// budget uses: the frame ring's accounted bytes, and TableBytes for a
// port whose ID table and load history are full.
func TestAccountedBytesMatchTheHeap(t *testing.T) {
	const frames = 100 * 256
	var s *Store
	var p *Port
	t0 := time.Unix(1_600_000_000, 0)
	heap := heapGrowth(func() {
		s, _ = New(Limits{Items: frames, Bytes: 1 << 30})
		p, _ = s.Port("can0", 0)
		for i := range frames {
			// One id, so the tables stay empty; frames within one second.
			p.Add(t0, 0x18FEF100|wire.CANEFF, []byte{byte(i), 2, 3, 4, 5, 6, 7, 8})
		}
	})
	if acct := float64(p.FrameStats().Bytes); acct < heap*0.95 || acct > heap*1.10 {
		t.Errorf("frame ring accounts %.0f bytes for %d frames, the heap grew %.0f", acct, frames, heap)
	}
	// The tables on a port of its own whose ring is one chunk: it holds
	// at most two (one filling, one kept for reuse), taken out below.
	var s2 *Store
	heap = heapGrowth(func() {
		s2, _ = New(Limits{Items: 256, Bytes: 1 << 30})
		p2, _ := s2.Port("can1", 0)
		for i := range MaxIDs {
			p2.Add(t0.Add(time.Duration(i%MaxSeconds)*time.Second), uint32(i)|wire.CANEFF, []byte{1})
		}
		for i := range MaxSeconds {
			p2.Add(t0.Add(time.Duration(MaxSeconds+i)*time.Second), 1|wire.CANEFF, []byte{1})
		}
	})
	heap -= 2 * 256 * float64(FrameBytes())
	if tb := float64(TableBytes()); heap > tb || heap < tb*0.6 {
		t.Errorf("full tables grew the heap by %.0f bytes; TableBytes says at most %.0f", heap, tb)
	}
	runtime.KeepAlive(s)
	runtime.KeepAlive(s2)
}
