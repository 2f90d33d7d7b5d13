package ring

import (
	"math"
	"math/rand/v2"
	"slices"
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
// kinds (weighed, uniform), weighed rings that keep their times
// (KeepTimes), and both append paths are exercised.
func TestAnsweredPlusEvictedIsSeen(t *testing.T) {
	base := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	rng := rand.New(rand.NewPCG(33, 1))
	for round := range 300 {
		items := 1 + rng.IntN(600)
		limit := Limits{Items: 1 + rng.IntN(400), Bytes: 1 << 30}
		var r *Ring[stamped]
		var err error
		fixed := round%3 == 1
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
		if round%3 == 2 {
			r.KeepTimes()
		}
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

// TestKeptTimesAsTheItems: a ring that keeps its items' times beside
// them (KeepTimes) tells the same EvictedTo as one that reads the evicted
// items, for times out of order, zero times and times past UnixNano's
// range too, and weighs each item KeptTimeBytes more.
func TestKeptTimesAsTheItems(t *testing.T) {
	base := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	rng := rand.New(rand.NewPCG(39, 2))
	size := func(s stamped) int { return len(s.payload) }
	for round := range 100 {
		limit := Limits{Items: 1 + rng.IntN(700), Bytes: 1 << 30}
		read, err := New[stamped](limit, size)
		if err != nil {
			t.Fatal(err)
		}
		kept, _ := New[stamped](limit, size)
		for _, r := range []*Ring[stamped]{read, kept} {
			r.TimeOf(func(s *stamped) time.Time { return s.at })
		}
		kept.KeepTimes()
		for range 1 + rng.IntN(2000) {
			v := stamped{payload: string(make([]byte, rng.IntN(maxPayload)))}
			switch k := rng.IntN(1000); {
			case k < 100: // some items have no time
			case k == 100 && round%2 == 0: // a bad clock: past UnixNano's range
				v.at = base.AddDate(300+rng.IntN(2), 0, 0)
			case k == 101 && round%2 == 0:
				v.at = base.AddDate(-400, 0, 0)
			default:
				v.at = base.Add(time.Duration(rng.IntN(100000)) * time.Millisecond)
			}
			read.Append(v)
			kept.Append(v)
		}
		a, b := read.Stats(), kept.Stats()
		if a.Evicted != b.Evicted || !a.EvictedTo.Equal(b.EvictedTo) || !a.Oldest.Equal(b.Oldest) {
			t.Fatalf("round %d: kept times evicted %d to %v (oldest %v), read items %d to %v (oldest %v)",
				round, b.Evicted, b.EvictedTo, b.Oldest, a.Evicted, a.EvictedTo, a.Oldest)
		}
		if b.Bytes-a.Bytes != int64(KeptTimeBytes*a.Items) {
			t.Fatalf("round %d: kept times weigh %d bytes, read %d: want %d more for %d items", round, b.Bytes, a.Bytes, KeptTimeBytes*a.Items, a.Items)
		}
	}
}

// TestRangePtrBetweenAsTheItems: the items RangePtrBetween hands over, each
// tested again by its own time as a caller does, are those whose time
// the window holds, for times out of order, zero times and a bad clock
// (past it no time is kept, and every item is handed over); and while
// times are kept no item outside the window is handed over at all.
func TestRangePtrBetweenAsTheItems(t *testing.T) {
	base := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	rng := rand.New(rand.NewPCG(39, 5))
	size := func(s stamped) int { return len(s.payload) }
	for round := range 200 {
		r, err := New[stamped](Limits{Items: 1 + rng.IntN(700), Bytes: 1 << 30}, size)
		if err != nil {
			t.Fatal(err)
		}
		r.TimeOf(func(s *stamped) time.Time { return s.at })
		r.KeepTimes()
		bad := uint64(math.MaxUint64) // the first item of a bad clock
		for i := range 1 + rng.IntN(2000) {
			v := stamped{payload: "x"}
			switch k := rng.IntN(1000); {
			case k < 100: // no time
			case k == 100 && round%3 == 0:
				v.at = base.AddDate(300, 0, 0)
				bad = min(bad, uint64(i))
			default:
				v.at = base.Add(time.Duration(rng.IntN(100000)) * time.Millisecond)
			}
			r.Append(v)
		}
		since := base.Add(time.Duration(rng.IntN(100000)) * time.Millisecond)
		until := since.Add(time.Duration(rng.IntN(50000)) * time.Millisecond)
		inRange := true // both bounds in UnixNano's range: nothing outside is handed over
		switch round % 8 {
		case 0:
			since = time.Time{} // only an end: zero times are before it
		case 1:
			since, inRange = base.AddDate(-500, 0, 0), false
		case 2:
			until, inRange = base.AddDate(400, 0, 0), false
		case 3:
			since, until, inRange = time.Time{}, base.AddDate(-500, 0, 0), false // the zero time alone
		case 4:
			since, until, inRange = base.AddDate(400, 0, 0), base.AddDate(401, 0, 0), false
		}
		holds := func(at time.Time) bool { return (since.IsZero() || !at.Before(since)) && at.Before(until) }
		snap := r.Snapshot()
		var want, got []uint64
		snap.RangePtr(0, func(seq uint64, v *stamped) bool {
			if holds(v.at) {
				want = append(want, seq)
			}
			return true
		})
		snap.RangePtrBetween(0, since, until, func(seq uint64, v *stamped) bool {
			if !holds(v.at) && seq < bad && inRange {
				t.Fatalf("round %d: item %d at %v handed over, outside the window with its time kept", round, seq, v.at)
			}
			if holds(v.at) {
				got = append(got, seq)
			}
			return true
		})
		if !slices.Equal(got, want) {
			t.Fatalf("round %d: %d items in the window, want %d", round, len(got), len(want))
		}
	}
}
