package ring

import (
	"fmt"
	"testing"
)

func BenchmarkAppend(b *testing.B) {
	r, _ := New[int](Limits{Items: 1 << 20, Bytes: 1 << 40}, nil)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		r.Append(i)
	}
}

// BenchmarkSnapshot shows that taking a snapshot costs the same whatever
// the ring holds.
func BenchmarkSnapshot(b *testing.B) {
	for _, n := range []int{1_000, 1_000_000} {
		r, _ := New[int](Limits{Items: n, Bytes: 1 << 40}, nil)
		for i := range n {
			r.Append(i)
		}
		b.Run(fmt.Sprintf("items=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = r.Snapshot()
			}
		})
	}
}

// BenchmarkAppendAllFull is a consumer's case: batches into a full ring
// of fixed-size items that reuses its chunks (issue #14).
func BenchmarkAppendAllFull(b *testing.B) {
	r, _ := NewFixed[[5]int64](Limits{Items: 100_000, Bytes: 1 << 40})
	r.ReuseChunks()
	batch := make([][5]int64, 256)
	for range 1000 {
		r.AppendAll(batch)
	}
	b.ReportAllocs()
	for b.Loop() {
		r.AppendAll(batch)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(batch)), "ns/item")
}
