package mcp

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"fieldtap/services/sip"
)

// TestNewestDialogsIsTheSortedTail: tail_dialogs' first page keeps the
// newest matches in a bounded heap; for random update times (many equal,
// told apart by id) offered in random order and every page size, it keeps
// what sorting every match and taking the tail did, in the same order.
func TestNewestDialogsIsTheSortedTail(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 9))
	for round := range 200 {
		ds := make([]*sip.Dialog, rng.IntN(300))
		for i := range ds {
			ds[i] = &sip.Dialog{ID: uint64(i), Updated: time.Unix(1000+int64(rng.IntN(40)), 0)}
		}
		rng.Shuffle(len(ds), func(i, j int) { ds[i], ds[j] = ds[j], ds[i] })
		limit := 1 + rng.IntN(120)
		top := newestDialogs{n: limit}
		for _, d := range ds {
			top.offer(tailKey(d), d)
		}
		want := slices.Clone(ds)
		slices.SortFunc(want, func(a, b *sip.Dialog) int { return cmpKey(tailKey(a), tailKey(b)) })
		want = want[max(len(want)-limit, 0):]
		if got := top.sorted(); !slices.Equal(got, want) {
			t.Fatalf("round %d, %d dialogs, limit %d: kept %d, want the %d of the greatest keys", round, len(ds), limit, len(got), len(want))
		}
	}
}
