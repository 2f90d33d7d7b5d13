package sip

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSnapshotMirrorsTheRing: the dialogs a snapshot copies from the
// store's mirror (Store.live) are the ring's, in its order, through new
// dialogs, changed ones (copied after a snapshot, changed in place
// before the next) and evictions by count and by bytes; the mirror never
// falls out of step with the ring.
func TestSnapshotMirrorsTheRing(t *testing.T) {
	for _, l := range []Limits{{Dialogs: 300, DialogBytes: 1 << 30, MessageBytes: 1 << 20}, {DialogBytes: 400 << 10, MessageBytes: 1 << 20}} {
		st := newStore(t, l)
		rng := rand.New(rand.NewPCG(7, uint64(l.Dialogs)))
		var m Parsed
		next, snaps := 0, 0
		for step := range 3000 {
			switch r := rng.IntN(10); {
			case r < 4 || next == 0:
				addCallMessages(t, st, &m, next, 0, 1+rng.IntN(4))
				next++
			case r < 9:
				i := max(next-1-rng.IntN(400), 0)
				addCallMessages(t, st, &m, i, 1+rng.IntN(3), 4+rng.IntN(4))
			default:
				var want []*Dialog
				st.mu.Lock()
				o := st.order.Snapshot()
				o.Range(0, func(_ uint64, sl *slot) bool {
					want = append(want, sl.d)
					return true
				})
				broken := st.live.broken || st.live.first != o.FirstSeq() || len(st.live.ds) != o.Len()
				st.mu.Unlock()
				sn := st.Snapshot()
				snaps++
				if !slices.Equal(sn.Dialogs, want) {
					t.Fatalf("limits %+v, step %d: the snapshot's %d dialogs are not the ring's %d", l, step, len(sn.Dialogs), len(want))
				}
				if broken {
					t.Fatalf("limits %+v, step %d: the mirror fell out of step with the ring", l, step)
				}
				for i, d := range sn.Dialogs { // find_problems' ids are told from the rows
					if sn.id(i) != d.ID {
						t.Fatalf("limits %+v, step %d: row %d's id %d, its dialog's %d", l, step, i, sn.id(i), d.ID)
					}
				}
			}
		}
		if ev := st.DialogStats().Evicted; ev == 0 || snaps == 0 {
			t.Fatalf("limits %+v: %d evicted, %d snapshots: the test wants both", l, ev, snaps)
		}
	}
}
