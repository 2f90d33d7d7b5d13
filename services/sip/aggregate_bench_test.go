package sip

import (
	"net/netip"
	"testing"
	"time"
)

// BenchmarkGroupMetrics100k is the work of aggregate_dialogs and
// group_dialogs over 100,000 answered calls, as a capture of calls gives
// it: between 2,000 phones and one proxy, post-dial delays that differ
// from call to call (a percentile of them is a selection, not a sort of
// equal values), by a single-valued and a multi-valued dimension; from
// the dialogs and from a quiet snapshot's columns.
func BenchmarkGroupMetrics100k(b *testing.B) {
	const calls = 100_000
	st := newStore(b, Limits{Dialogs: calls, DialogBytes: 1 << 30, MessageBytes: 1 << 20})
	addAnsweredCalls(b, st, calls)
	sn := st.Snapshot()
	if len(sn.Dialogs) != calls {
		b.Fatalf("the store kept %d of %d dialogs", len(sn.Dialogs), calls)
	}
	for _, dim := range []string{"final_code", "participant_ip"} {
		b.Run("aggregate/"+dim, func(b *testing.B) {
			for b.Loop() {
				Aggregate(sn.Dialogs, nil, dim, 10)
			}
		})
		b.Run("group/"+dim, func(b *testing.B) {
			for b.Loop() {
				if g := GroupMetrics(sn.Dialogs, nil, dim, 10); g.Overall.PDDp50.Population != calls {
					b.Fatalf("PDD of %d calls, want %d", g.Overall.PDDp50.Population, calls)
				}
			}
		})
		// The snapshot's answers once it keeps columns (a quiet store):
		// the first ask scans, the second builds them.
		for range 2 {
			sn.GroupMetrics(nil, dim, 10)
		}
		b.Run("columns/aggregate/"+dim, func(b *testing.B) {
			for b.Loop() {
				sn.Aggregate(nil, dim, 10)
			}
		})
		b.Run("columns/group/"+dim, func(b *testing.B) {
			for b.Loop() {
				if g := sn.GroupMetrics(nil, dim, 10); g.Overall.PDDp50.Population != calls {
					b.Fatalf("PDD of %d calls, want %d", g.Overall.PDDp50.Population, calls)
				}
			}
		})
	}
	// A live store's calls: a new call (the oldest evicted) between every
	// two, each call on its own snapshot, which carries the columns of the
	// one before (carry.go). The change is outside the timing; the
	// snapshot is inside, as a call pays it.
	var m Parsed
	next := calls
	change := func(b *testing.B) {
		b.StopTimer()
		addCallMessages(b, st, &m, next, 0, len(ladder(next)))
		next++
		b.StartTimer()
	}
	e, err := Compile(`from_user ~ "^10"`)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("group/participant_ip/filtered", func(b *testing.B) { // a scan, as a live call before the filter columns were carried
		sn := st.Snapshot()
		for b.Loop() {
			GroupMetrics(sn.Dialogs, matcher(e), "participant_ip", 10)
		}
	})
	b.Run("live/group/participant_ip/filtered", func(b *testing.B) {
		for b.Loop() {
			change(b)
			st.Snapshot().GroupMetrics(e, "participant_ip", 10)
		}
	})
	mask := ProblemMask(ProblemNames())
	b.Run("live/problems", func(b *testing.B) {
		for b.Loop() {
			change(b)
			n := 0
			st.Snapshot().Each(nil, mask, func(uint64, *Dialog) { n++ })
		}
	})
	for _, dim := range []string{"final_code", "participant_ip"} {
		b.Run("live/aggregate/"+dim, func(b *testing.B) {
			for b.Loop() {
				change(b)
				st.Snapshot().Aggregate(nil, dim, 10)
			}
		})
		b.Run("live/group/"+dim, func(b *testing.B) {
			for b.Loop() {
				change(b)
				if g := st.Snapshot().GroupMetrics(nil, dim, 10); g.Overall.PDDp50.Population != calls {
					b.Fatalf("PDD of %d calls, want %d", g.Overall.PDDp50.Population, calls)
				}
			}
		})
	}
}

// addAnsweredCalls adds calls answered calls to st: between 2,000 phones
// and one proxy, 10 ms apart, post-dial delays that differ.
func addAnsweredCalls(tb testing.TB, st *Store, calls int) {
	var m Parsed
	for i := range calls {
		addCallMessages(tb, st, &m, i, 0, len(ladder(i)))
	}
}

// addCallMessages adds messages from to to-1 of call i's ladder to st,
// as addAnsweredCalls sends them.
func addCallMessages(tb testing.TB, st *Store, m *Parsed, i, from, to int) {
	proxy := netip.MustParseAddrPort("198.51.100.7:5060")
	t0 := time.Unix(1_700_000_000, 0)
	phone := netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 1, byte(i % 2000 / 250), byte(i % 250)}), 5060)
	start := t0.Add(time.Duration(i) * 10 * time.Millisecond)
	pdd := time.Duration(40+i*7919%3000) * time.Millisecond
	for j, raw := range ladder(i)[from:to] {
		j += from
		if err := m.Parse([]byte(raw)); err != nil {
			tb.Fatal(err)
		}
		at, src, dst := start, phone, proxy
		if j > 0 {
			at = start.Add(pdd + time.Duration(j)*time.Second)
		}
		if !m.Request {
			src, dst = dst, src
		}
		st.Add(Meta{Time: at, Src: src, Dst: dst, Transport: TransportUDP}, m, []byte(raw))
	}
}

// BenchmarkTimeline100k is timeline over 100,000 answered calls, one
// bucket an hour: from the dialogs (their attempts from each one's
// transactions), and from a quiet snapshot's mark column.
func BenchmarkTimeline100k(b *testing.B) {
	const calls = 100_000
	st := newStore(b, Limits{Dialogs: calls, DialogBytes: 1 << 30, MessageBytes: 1 << 20})
	addAnsweredCalls(b, st, calls)
	sn := st.Snapshot()
	b.Run("dialogs", func(b *testing.B) {
		for b.Loop() {
			if _, _, err := Timeline(sn.Dialogs, nil, []time.Duration{time.Hour}, time.Time{}, time.Time{}, 1000); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("column", func(b *testing.B) {
		for b.Loop() {
			if _, _, err := sn.Timeline(nil, []time.Duration{time.Hour}, time.Time{}, time.Time{}, 1000); err != nil {
				b.Fatal(err)
			}
		}
	})
	// A filter of columned fields: every dialog tested, then the mark
	// column's rows the filter columns match.
	e, err := Compile(`from_user ~ "^10"`)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("dialogs filtered", func(b *testing.B) {
		for b.Loop() {
			if _, _, err := Timeline(sn.Dialogs, matcher(e), []time.Duration{time.Hour}, time.Time{}, time.Time{}, 1000); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("column filtered", func(b *testing.B) {
		for b.Loop() {
			if _, _, err := sn.Timeline(e, []time.Duration{time.Hour}, time.Time{}, time.Time{}, 1000); err != nil {
				b.Fatal(err)
			}
		}
	})
}
