package sip

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// timelineTwoPasses is Timeline as it was first written: the matching
// dialogs found in one pass, counted into the buckets in a second, each
// dialog's attempts worked out in both.
func timelineTwoPasses(ds []*Dialog, match func(*Dialog) bool, width time.Duration, since, until time.Time) []TimeBucket {
	var hit []*Dialog
	lo, hi := since, until
	for _, d := range ds {
		if (!since.IsZero() && d.Created.Before(since)) || (!until.IsZero() && !d.Created.Before(until)) || !match(d) {
			continue
		}
		hit = append(hit, d)
		if since.IsZero() && (lo.IsZero() || d.Created.Before(lo)) {
			lo = d.Created
		}
		if until.IsZero() && d.Created.After(hi) {
			hi = d.Created
		}
		if as := d.Attempts(); until.IsZero() && len(as) > 0 && as[len(as)-1].Start.After(hi) {
			hi = as[len(as)-1].Start
		}
	}
	if lo.IsZero() || hi.IsZero() {
		return []TimeBucket{}
	}
	first := alignDown(lo, width)
	n := int(alignDown(hi, width).Sub(first)/width) + 1
	if !until.IsZero() && alignDown(until, width).Equal(until) {
		n--
	}
	out := make([]TimeBucket, max(n, 0))
	for i := range out {
		out[i].Start = first.Add(time.Duration(i) * width)
	}
	last := first.Add(time.Duration(len(out)) * width)
	for _, d := range hit {
		out[int(d.Created.Sub(first)/width)].Dialogs++
		as := d.Attempts()
		if len(as) == 0 {
			if d.FinalCode >= 400 {
				out[int(d.Created.Sub(first)/width)].Failed++
			}
			continue
		}
		for _, a := range as {
			if a.Start.Before(first) || !a.Start.Before(last) {
				continue
			}
			b := &out[int(a.Start.Sub(first)/width)]
			b.Invites++
			if a.FinalCode >= 200 && a.FinalCode < 300 {
				b.Answered++
			}
			switch {
			case a.State == StateCancelled:
				b.Cancelled++
			case a.FinalCode >= 400:
				b.Failed++
			}
		}
	}
	return out
}

// TestTimelineMatchesTwoPasses: on random stores (calls dialled again,
// answered, failed, challenged, cancelled; registrations accepted and
// refused), for random
// bucket widths, ranges (open, or cutting through calls whose attempts
// start after their dialogs) and filters, Timeline's one pass counts what
// the two passes did, bucket by bucket.
func TestTimelineMatchesTwoPasses(t *testing.T) {
	for seed := range uint64(10) {
		rng := rand.New(rand.NewPCG(seed, 7))
		st := newStore(t, Limits{})
		at := time.Unix(1000, 0)
		cseq := map[string]int{}
		for i := range 800 {
			at = at.Add(time.Duration(rng.IntN(20000)) * time.Millisecond)
			if i%10 == 0 { // a registration, failed or not: a dialog without an INVITE
				id := fmt.Sprintf("r%d-%d", seed, i)
				addRaw(t, st, at, req("REGISTER", id, 1))
				addRaw(t, st, at.Add(time.Millisecond), resp([]int{200, 403, 401}[rng.IntN(3)], "REGISTER", id, 1))
				continue
			}
			addRaw(t, st, at, randomMessage(rng, cseq, fmt.Sprintf("t%d-", seed), 80))
		}
		sn := st.Snapshot()
		start, end := sn.Dialogs[0].Created, at
		counted, failures, filtered := 0, 0, 0
		for q := range 40 {
			width := time.Duration(1+rng.IntN(600)) * time.Second
			var since, until time.Time
			if q%3 > 0 {
				since = start.Add(time.Duration(rng.Int64N(int64(end.Sub(start)))))
			}
			if q%4 > 1 {
				until = since.Add(time.Duration(1 + rng.Int64N(int64(end.Sub(start)))))
			}
			if q%5 == 4 { // a window ending, or starting, on a failure's time exactly
				d := sn.Dialogs[rng.IntN(len(sn.Dialogs))]
				if !d.FinalAt.IsZero() {
					since, until = d.FinalAt.Add(-time.Minute), d.FinalAt
					if q%10 == 9 {
						since, until = d.FinalAt, d.FinalAt.Add(time.Minute)
					}
				}
			}
			code := []int{0, 200, 486}[rng.IntN(3)]
			match := func(d *Dialog) bool { return code == 0 || d.FinalCode == code }
			got, _, err := Timeline(sn.Dialogs, match, []time.Duration{width}, since, until, 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			if want := timelineTwoPasses(sn.Dialogs, match, width, since, until); !reflect.DeepEqual(got, want) {
				t.Fatalf("seed %d, width %v, since %v, until %v, final code %d:\n got %+v\nwant %+v", seed, width, since, until, code, got, want)
			}
			// Its failures in the window: a read of the failures'
			// RowColumn on the first ask, then the failure column, both
			// in the dialogs' order.
			var wantF []uint64
			for _, d := range sn.Dialogs {
				if d.FinalCode >= 400 && !d.FinalAt.IsZero() && (since.IsZero() || !d.FinalAt.Before(since)) && (until.IsZero() || d.FinalAt.Before(until)) {
					wantF = append(wantF, d.ID)
				}
			}
			for ask := range 2 {
				var gotF []uint64
				sn.EachFailure(since, until, func(d *Dialog) { gotF = append(gotF, d.ID) })
				if !slices.Equal(gotF, wantF) {
					t.Fatalf("seed %d, EachFailure ask %d, since %v, until %v: %v, want %v", seed, q+ask, since, until, gotF, wantF)
				}
				failures += len(gotF)
			}
			// The snapshot's, without a filter: its mark column, built
			// on the first ask.
			every := func(*Dialog) bool { return true }
			want := timelineTwoPasses(sn.Dialogs, every, width, since, until)
			for ask := range 2 {
				got, _, err := sn.Timeline(nil, []time.Duration{width}, since, until, 1<<20)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("seed %d, Snapshot.Timeline ask %d, width %v, since %v, until %v:\n got %+v\nwant %+v", seed, q+ask, width, since, until, got, want)
				}
			}
			for _, b := range got {
				counted += b.Invites + b.Failed + b.Cancelled
			}
			// The snapshot's with a filter of columned fields: the mark
			// column's rows the filter columns match. And one the columns
			// cannot answer (state): the dialogs.
			for _, src := range []string{fmt.Sprintf("final_code == %d", code), "final_code >= 400 or from_user ~ \"^1\"", "state == failed"} {
				e, err := Compile(src)
				if err != nil {
					t.Fatal(err)
				}
				want, _, err := Timeline(sn.Dialogs, func(d *Dialog) bool { return e.Match(d) }, []time.Duration{width}, since, until, 1<<20)
				if err != nil {
					t.Fatal(err)
				}
				for ask := range 2 {
					got, _, err := sn.Timeline(e, []time.Duration{width}, since, until, 1<<20)
					if err != nil {
						t.Fatal(err)
					}
					if !reflect.DeepEqual(got, want) {
						t.Fatalf("seed %d, Snapshot.Timeline %q ask %d, width %v, since %v, until %v:\n got %+v\nwant %+v", seed, src, q+ask, width, since, until, got, want)
					}
					for _, b := range got {
						filtered += b.Dialogs
					}
				}
			}
		}
		if counted == 0 || filtered == 0 {
			t.Fatalf("seed %d: no attempt counted (%d), or no dialog through a filter (%d)", seed, counted, filtered)
		}
		if !sn.site.failures.ok || failures == 0 {
			t.Fatalf("seed %d: the failure column was not built, or no failure was found", seed)
		}
		if sn.site.marks.ends == nil {
			t.Fatalf("seed %d: the mark column was not built: Snapshot.Timeline read the dialogs every time", seed)
		}
	}
}

// TestTimelineWidensToFit: given widths, a timeline takes the first whose
// buckets fit, read from the dialogs or from the mark column alike, and
// counts as a timeline asked for that width alone; past the last it
// refuses, naming the last.
func TestTimelineWidensToFit(t *testing.T) {
	st := newStore(t, Limits{})
	at := time.Unix(1_700_000_000, 0)
	for i := range 60 { // 60 calls, 12 hours apart: 30 days
		id := fmt.Sprintf("w%d", i)
		addRaw(t, st, at, req("INVITE", id, 1))
		addRaw(t, st, at.Add(time.Second), resp([]int{200, 486}[i%2], "INVITE", id, 1))
		at = at.Add(12 * time.Hour)
	}
	sn := st.Snapshot()
	ladder := []time.Duration{time.Minute, 5 * time.Minute, time.Hour, 24 * time.Hour}
	all := func(*Dialog) bool { return true }
	for _, c := range []struct {
		max  int
		want time.Duration
	}{{1 << 20, time.Minute}, {10_000, 5 * time.Minute}, {1000, time.Hour}, {40, 24 * time.Hour}} {
		want, _, err := Timeline(sn.Dialogs, all, []time.Duration{c.want}, time.Time{}, time.Time{}, c.max)
		if err != nil {
			t.Fatal(err)
		}
		got, w, err := Timeline(sn.Dialogs, all, ladder, time.Time{}, time.Time{}, c.max)
		if err != nil || w != c.want || !reflect.DeepEqual(got, want) {
			t.Fatalf("Timeline at most %d buckets: width %v (%v), want %v, %d buckets (want %d)", c.max, w, err, c.want, len(got), len(want))
		}
		for ask := range 2 { // the dialogs, then the mark column built on the first ask
			got, w, err := sn.Timeline(nil, ladder, time.Time{}, time.Time{}, c.max)
			if err != nil || w != c.want || !reflect.DeepEqual(got, want) {
				t.Fatalf("Snapshot.Timeline ask %d, at most %d buckets: width %v (%v), want %v", ask, c.max, w, err, c.want)
			}
		}
	}
	if _, _, err := sn.Timeline(nil, ladder, time.Time{}, time.Time{}, 20); err == nil || !strings.Contains(err.Error(), "of 24h0m0s") {
		t.Fatalf("30 days in at most 20 buckets of a day at most: %v, want a refusal naming the widest", err)
	}
	for _, bad := range [][]time.Duration{nil, {0}, {time.Hour, time.Minute}, {time.Minute, time.Minute}} {
		if _, _, err := sn.Timeline(nil, bad, time.Time{}, time.Time{}, 1000); err == nil {
			t.Fatalf("widths %v: no error", bad)
		}
	}
}
