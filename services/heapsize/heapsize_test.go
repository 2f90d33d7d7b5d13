package heapsize

import (
	"runtime"
	"testing"
)

func TestBytes(t *testing.T) {
	for _, tc := range []struct {
		name string
		n    int
		want int
	}{
		{name: "zero", n: 0, want: 0},
		{name: "one byte", n: 1, want: 8},
		{name: "exact class", n: 48, want: 48},
		{name: "between classes", n: 700, want: 704},
		{name: "largest class", n: 32768, want: 32768},
		{name: "large rounds to pages", n: 32769, want: 40960},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Bytes(tc.n); got != tc.want {
				t.Errorf("Bytes(%d) = %d, want %d", tc.n, got, tc.want)
			}
		})
	}
	if got := Pointers(600); got != 640 {
		t.Errorf("Pointers(600) = %d, want 640 (600 + 8-byte header → 640 class)", got)
	}
}

// TestSmallTable holds the lookup table of sizes up to smallMax to the
// class list it is built from: the smallest class not below n.
func TestSmallTable(t *testing.T) {
	for n := 1; n <= smallMax; n++ {
		want := 0
		for _, c := range classes {
			if c >= n {
				want = c
				break
			}
		}
		if got := Bytes(n); got != want {
			t.Fatalf("Bytes(%d) = %d, want %d", n, got, want)
		}
	}
}

var sink [][]byte

// TestBytesMatchesTheRuntime allocates many objects of one size and
// compares the heap's growth with what Bytes says each costs.
func TestBytesMatchesTheRuntime(t *testing.T) {
	for _, n := range []int{13, 100, 700, 1500, 5000, 40000} {
		// Enough small objects that the runtime's own allocations during
		// the loop (a few KiB) stay well inside the tolerance.
		count := 2000
		if n < 1000 {
			count = 50_000
		}
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		sink = make([][]byte, count)
		for i := range sink {
			sink[i] = make([]byte, n)
		}
		runtime.ReadMemStats(&after)
		per := float64(after.HeapAlloc-before.HeapAlloc-uint64(Pointers(count*24))) / float64(count)
		want := float64(Bytes(n))
		if per < want*0.97 || per > want*1.03 {
			t.Errorf("%d-byte slices: heap grew %.1f bytes each, Bytes says %.0f", n, per, want)
		}
		sink = nil
	}
}

var grown []struct{ a, b, c, d, e, f int64 }

// TestAppendedMatchesTheRuntime appends one by one and compares the final
// array with what Appended predicts.
func TestAppendedMatchesTheRuntime(t *testing.T) {
	for _, n := range []int{1, 5, 120, 300, 3600, 10000} {
		grown = nil
		for range n {
			grown = append(grown, struct{ a, b, c, d, e, f int64 }{})
		}
		if got, want := Appended(n, 48, false), Bytes(cap(grown)*48); got != want {
			t.Errorf("Appended(%d, 48) = %d; the runtime's array is %d bytes (cap %d)", n, got, want, cap(grown))
		}
	}
}
