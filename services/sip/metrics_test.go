package sip

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// sortedPercentile is the nearest-rank percentile by the definition:
// the value at rank ceil(p/100 × N) of the sorted samples.
func sortedPercentile(samples []float64, p float64) float64 {
	s := slices.Sorted(slices.Values(samples))
	return s[max(int(math.Ceil(p/100*float64(len(s)))), 1)-1]
}

// TestPercentilesSelectAsASortWould: the selection gives the sorted
// samples' nearest ranks on the shapes quickselect finds hard (sorted,
// reversed, all equal, few distinct values, organ pipes, median-of-three
// killers) and on random ones, at sizes around its sort cut-off.
func TestPercentilesSelectAsASortWould(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	shapes := map[string]func(i, n int) float64{
		"random":   func(int, int) float64 { return r.Float64() * 3000 },
		"sorted":   func(i, _ int) float64 { return float64(i) },
		"reversed": func(i, n int) float64 { return float64(n - i) },
		"equal":    func(int, int) float64 { return 120 },
		"few":      func(int, int) float64 { return float64(r.IntN(3)) * 10 },
		"organ":    func(i, n int) float64 { return float64(min(i, n-i)) },
		"killer": func(i, n int) float64 { // odd rank first, then the rest
			if i%2 == 0 {
				return float64(i)
			}
			return float64(n + i)
		},
	}
	for name, shape := range shapes {
		for _, n := range []int{1, 2, 3, 12, 13, 14, 100, 1001, 20_000} {
			samples := make([]float64, n)
			for i := range samples {
				samples[i] = shape(i, n)
			}
			want50, want95 := sortedPercentile(samples, 50), sortedPercentile(samples, 95)
			sorted := slices.Sorted(slices.Values(samples))
			for _, asked := range []struct {
				samples []float64
				sorted  bool
			}{{slices.Clone(samples), false}, {sorted, true}} {
				p50, p95 := percentiles(asked.samples, asked.sorted)
				if *p50.Value != want50 || *p95.Value != want95 || p50.Population != n || p95.Population != n {
					t.Errorf("%s, %d samples (sorted %v): p50 %v p95 %v (of %d, %d), want %v %v", name, n, asked.sorted, *p50.Value, *p95.Value, p50.Population, p95.Population, want50, want95)
				}
			}
			if !slices.Equal(sorted, slices.Sorted(slices.Values(samples))) {
				t.Errorf("%s, %d samples: percentiles reordered samples it was told are sorted", name, n)
			}
		}
	}
	if p50, p95 := percentiles(nil, false); p50.Value != nil || p95.Value != nil || p50.NullReason == "" || p50.Unit != "ms" {
		t.Errorf("no samples: %+v %+v, want null ms figures with a reason", p50, p95)
	}
}

// TestSelectNthPlacesK: every value before k is no greater, every one
// after no smaller, and the samples are the same multiset.
func TestSelectNthPlacesK(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 200 {
		n := 1 + r.IntN(500)
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = float64(r.IntN(40))
		}
		k := r.IntN(n)
		want := slices.Sorted(slices.Values(xs))
		selectNth(xs, k)
		if xs[k] != want[k] {
			t.Fatalf("xs[%d] = %v, want %v", k, xs[k], want[k])
		}
		for i, v := range xs {
			if i < k && v > xs[k] || i > k && v < xs[k] {
				t.Fatalf("xs[%d] = %v on the wrong side of xs[%d] = %v", i, v, k, xs[k])
			}
		}
		if got := slices.Sorted(slices.Values(xs)); !slices.Equal(got, want) {
			t.Fatal("the selection changed the samples")
		}
	}
}
