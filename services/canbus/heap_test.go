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

// TestFDFramesAccountedByRealSize fills a ring with 64-byte CAN FD
// frames: their accounted bytes (slot and data array) match the heap, and
// a byte limit holds as many of them as their real size allows.
func TestFDFramesAccountedByRealSize(t *testing.T) {
	const frames = 100 * 256
	var s *Store
	var p *Port
	t0 := time.Unix(1_600_000_000, 0)
	data := make([]byte, wire.MaxCANFDData)
	heap := heapGrowth(func() {
		s, _ = New(Limits{Items: frames, Bytes: 1 << 30})
		p, _ = s.Port("can0", 0)
		for i := range frames {
			data[0] = byte(i)
			p.AddFrame(t0, 0x18FEF100|wire.CANEFF, wire.CANFDFDF|wire.CANFDBRS, data)
		}
	})
	acct := float64(p.FrameStats().Bytes)
	if acct != float64(frames*FDFrameBytes()) || acct < heap*0.95 || acct > heap*1.10 {
		t.Errorf("frame ring accounts %.0f bytes for %d FD frames (%d each), the heap grew %.0f", acct, frames, FDFrameBytes(), heap)
	}
	t.Logf("a classic frame costs %d bytes, a 64-byte FD frame %d; %d FD frames grew the heap %.0f bytes", FrameBytes(), FDFrameBytes(), frames, heap)
	// A ring of room for 1000 classic frames keeps fewer FD ones, and
	// short FD frames cost what classic ones do.
	s2, _ := New(Limits{Items: 10_000, Bytes: 1000 * FrameBytes()})
	p2, _ := s2.Port("can0", 0)
	for range 2000 {
		p2.AddFrame(t0, 0x123, wire.CANFDFDF, data)
	}
	if got, want := p2.FrameStats().Items, int(1000*FrameBytes()/FDFrameBytes()); got != want {
		t.Errorf("a 1000-classic-frame ring kept %d long FD frames, want %d", got, want)
	}
	for range 2000 {
		p2.AddFrame(t0, 0x123, wire.CANFDFDF, data[:8])
	}
	if got := p2.FrameStats().Items; got != 1000 {
		t.Errorf("kept %d 8-byte FD frames, want 1000", got)
	}
	runtime.KeepAlive(s)
}
