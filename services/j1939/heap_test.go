package j1939

import (
	"runtime"
	"testing"
	"time"

	"fieldtap/services/ring"
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

// TestAccountedBytesMatchTheHeap checks the figures the memory budget
// takes from this store: a ring of samples costs what it accounts, and a
// port whose latest, PGN and ECU tables are full stays within TableBytes.
func TestAccountedBytesMatchTheHeap(t *testing.T) {
	const samples = 200 * 256
	var s *Store
	t0 := time.Unix(1_600_000_000, 0)
	heap := heapGrowth(func() {
		s, _ = New(Limits{Samples: ringLimits(samples, SampleBytes())})
		// EEC1 (PGN 61444) decodes to several SPN samples per frame.
		for i := 0; s.samples.Stats().Appended < samples; i++ {
			s.Feed("can0", t0.Add(time.Duration(i)*time.Millisecond), 0x0CF00400, true, []byte{0xF0, 0x7D, 0x7D, byte(i), byte(i >> 8), 0, 0xF0, 0x7D})
		}
	})
	st := s.samples.Stats()
	t.Logf("%d samples: accounted %d bytes, heap grew %.0f", st.Items, st.Bytes, heap)
	// The port's tables hold one ECU and one PGN: small next to the ring.
	if acct := float64(st.Bytes); acct < heap*0.93 || acct > heap*1.10 {
		t.Errorf("sample ring accounts %.0f bytes for %d samples, the heap grew %.0f", acct, st.Items, heap)
	}
	heap = heapGrowth(func() {
		// 16 sources × 256 proprietary-B PGNs fill the latest table.
		for sa := range 16 {
			for ps := range 256 {
				id := uint32(0x18FF0000) | uint32(ps)<<8 | uint32(sa)
				s.Feed("can1", t0, id, true, []byte{1, 2, 3, 4, 5, 6, 7, 8})
			}
		}
	})
	t.Logf("full latest table: heap grew %.0f bytes; TableBytes %d (with full DM, claim and TP tables too)", heap, TableBytes())
	if tb := float64(TableBytes()); heap > tb {
		t.Errorf("a port with a full latest table grew the heap by %.0f bytes; TableBytes says at most %.0f", heap, tb)
	}
	runtime.KeepAlive(s)
}

func ringLimits(items int, each int64) ring.Limits {
	return ring.Limits{Items: items, Bytes: int64(items) * each}
}
