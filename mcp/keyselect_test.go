package mcp

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestKeySelectIsTheSortedEnd: for random keys (many equal times, told
// apart by id) offered shuffled, nearly in order, in order or reversed,
// and every page size, keySelect keeps what sorting them all and taking
// the end (the greatest, or with least the least) did, in the same order.
func TestKeySelectIsTheSortedEnd(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 9))
	for round := range 400 {
		ks := make([]rowKey, rng.IntN(300))
		for i := range ks {
			ks[i] = rowKey{uint64(i/3 + rng.IntN(40)), uint64(i)}
		}
		// Shuffled, nearly in order, in order, in reverse order.
		switch round % 4 {
		case 0:
			rng.Shuffle(len(ks), func(i, j int) { ks[i], ks[j] = ks[j], ks[i] })
		case 2:
			slices.SortFunc(ks, cmpKey)
		case 3:
			slices.SortFunc(ks, func(a, b rowKey) int { return cmpKey(b, a) })
		}
		n, least := 1+rng.IntN(120), round%8 < 4
		sel := keySelect[int]{n: n, least: least}
		for i, k := range ks {
			sel.offer(k, i)
		}
		want := slices.SortedFunc(slices.Values(ks), cmpKey)
		if least {
			want = want[:min(n, len(want))]
		} else {
			want = want[max(len(want)-n, 0):]
		}
		var got []rowKey
		for _, kv := range sel.sorted() {
			if ks[kv.v] != kv.k {
				t.Fatalf("round %d: value %d kept with key %v, offered with %v", round, kv.v, kv.k, ks[kv.v])
			}
			got = append(got, kv.k)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("round %d, %d keys, n %d, least %v: kept %v, want %v", round, len(ks), n, least, got, want)
		}
	}
}
