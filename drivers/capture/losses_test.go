package capture

import (
	"testing"
	"time"
)

// lostSince adds up the losses whose second ends after since, by cause,
// as an answer over a window starting at since counts them.
func lostSince(log []Loss, since time.Time) map[string]uint64 {
	var out map[string]uint64
	for _, e := range log {
		if !since.IsZero() && e.At.Add(time.Second).Before(since) {
			continue
		}
		if out == nil {
			out = map[string]uint64{}
		}
		out[e.Cause] += e.N
	}
	return out
}

func TestLossesByCaptureClockAndWindow(t *testing.T) {
	t0 := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	var c Counters
	c.Frame(t0, 60)
	c.Drop(DropHandoffFull, 3)
	c.Drop(DropHandoffFull, 2) // same second: one entry
	c.Frame(t0.Add(10*time.Second), 60)
	c.SetDrop(DropKernel, 7)
	c.SetDrop(DropKernel, 7) // no increase: nothing logged
	c.Frame(t0.Add(20*time.Second), 60)
	c.SetDrop(DropKernel, 9)

	st := c.Snapshot()
	if len(st.Losses) != 3 {
		t.Fatalf("losses = %+v, want 3 entries", st.Losses)
	}
	for _, tc := range []struct {
		name  string
		since time.Time
		want  map[string]uint64
	}{
		{name: "every loss", want: map[string]uint64{DropHandoffFull: 5, DropKernel: 9}},
		{name: "from the second kernel burst's second", since: t0.Add(10 * time.Second), want: map[string]uint64{DropKernel: 9}},
		{name: "after the kernel's first burst", since: t0.Add(15 * time.Second), want: map[string]uint64{DropKernel: 2}},
		{name: "after every loss", since: t0.Add(30 * time.Second), want: nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := lostSince(st.Losses, tc.since)
			if len(got) != len(tc.want) {
				t.Fatalf("LostSince = %v, want %v", got, tc.want)
			}
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("LostSince[%s] = %d, want %d", k, got[k], v)
				}
			}
		})
	}
}

// TestLossLogBoundedKeepsEveryLoss: past maxLosses entries the oldest are
// folded, never dropped: the sum over every loss stays the drop counter.
func TestLossLogBoundedKeepsEveryLoss(t *testing.T) {
	t0 := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	var c Counters
	const seconds = 3 * maxLosses
	for i := range seconds {
		c.Frame(t0.Add(time.Duration(i)*time.Second), 60)
		c.Drop(DropHandoffFull, 1)
	}
	st := c.Snapshot()
	if len(st.Losses) != maxLosses {
		t.Fatalf("%d entries, want the bound %d", len(st.Losses), maxLosses)
	}
	if got := lostSince(st.Losses, time.Time{})[DropHandoffFull]; got != seconds || got != st.Drops[DropHandoffFull] {
		t.Errorf("every loss adds up to %d, want %d (the counter says %d)", got, seconds, st.Drops[DropHandoffFull])
	}
	// A window from the middle is told of at least what it lost.
	mid := t0.Add(seconds / 2 * time.Second)
	if got := lostSince(st.Losses, mid)[DropHandoffFull]; got < seconds/2 {
		t.Errorf("window from the middle told of %d losses, want at least %d", got, seconds/2)
	}
}
