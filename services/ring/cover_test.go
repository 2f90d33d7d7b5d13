package ring

import (
	"math/rand/v2"
	"testing"
	"time"
)

// stamped is an item with a time, as every capture store's items are.
type stamped struct {
	at      time.Time
	payload string
}

const maxPayload = 40

// TestAnsweredPlusEvictedIsSeen is the coverage property (issue #33): for
// any ring and any window, the items an answer finds in the window plus
// the items evicted from it are the items seen in it; the window holds
// nothing evicted exactly when it starts after EvictedTo, so an answer
// that calls itself whole on that test never is short. Rings of both
// kinds (weighed, uniform) and both append paths are exercised.
func TestAnsweredPlusEvictedIsSeen(t *testing.T) {
	base := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	rng := rand.New(rand.NewPCG(33, 1))
	for round := range 300 {
		items := 1 + rng.IntN(600)
		limit := Limits{Items: 1 + rng.IntN(400), Bytes: 1 << 30}
		var r *Ring[stamped]
		var err error
		fixed := round%2 == 1
		if fixed {
			r, err = NewFixed[stamped](limit)
		} else {
			// Never below one item's weight: no item is oversize, so
			// every item seen has a sequence number.
			limit.Bytes = int64(SlotBytes[stamped]()*(1+rng.IntN(300))) + maxPayload + int64(rng.IntN(4000))
			r, err = New[stamped](limit, func(s stamped) int { return len(s.payload) })
		}
		if err != nil {
			t.Fatal(err)
		}
		r.TimeOf(func(s *stamped) time.Time { return s.at })
		var seen []stamped
		at := base
		for len(seen) < items {
			batch := 1 + rng.IntN(8)
			var vs []stamped
			for range batch {
				at = at.Add(time.Duration(rng.IntN(3)) * time.Second) // ties happen
				v := stamped{at: at}
				if !fixed {
					v.payload = string(make([]byte, rng.IntN(maxPayload)))
				}
				vs = append(vs, v)
			}
			if rng.IntN(2) == 0 {
				r.AppendAll(vs)
			} else {
				for _, v := range vs {
					r.Append(v)
				}
			}
			seen = append(seen, vs...)
		}
		st := r.Stats()
		snap := r.Snapshot()
		if uint64(st.Items)+st.Evicted+st.Oversize != uint64(len(seen)) {
			t.Fatalf("round %d: held %d + evicted %d + oversize %d != seen %d", round, st.Items, st.Evicted, st.Oversize, len(seen))
		}
		held := map[uint64]bool{}
		snap.Range(0, func(seq uint64, _ stamped) bool { held[seq] = true; return true })
		for range 20 {
			since := base.Add(time.Duration(rng.IntN(2*items+2)) * time.Second)
			until := since.Add(time.Duration(rng.IntN(items+1)) * time.Second)
			var inWindow, answered int
			snap.Range(0, func(_ uint64, v stamped) bool {
				if !v.at.Before(since) && v.at.Before(until) {
					answered++
				}
				return true
			})
			for _, v := range seen {
				if !v.at.Before(since) && v.at.Before(until) {
					inWindow++
				}
			}
			evictedIn := inWindow - answered
			if evictedIn < 0 {
				t.Fatalf("round %d: answered %d items in a window that saw %d", round, answered, inWindow)
			}
			whole := st.Evicted == 0 || since.After(st.EvictedTo)
			if whole && evictedIn > 0 {
				t.Fatalf("round %d: window from %v called whole (evicted to %v) but %d of its items were evicted", round, since, st.EvictedTo, evictedIn)
			}
		}
		if st.Items > 0 && !st.Oldest.Equal(seen[snap.FirstSeq()].at) {
			t.Fatalf("round %d: Oldest %v, want %v", round, st.Oldest, seen[snap.FirstSeq()].at)
		}
		if st.Evicted > 0 && !st.EvictedTo.Equal(seen[snap.FirstSeq()-1].at) {
			t.Fatalf("round %d: EvictedTo %v, want the last evicted item's %v", round, st.EvictedTo, seen[snap.FirstSeq()-1].at)
		}
	}
}
