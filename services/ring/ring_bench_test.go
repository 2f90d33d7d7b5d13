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
