package sip

import (
	"fmt"
	"reflect"
	"slices"
	"testing"
)

// TestCarriedColumnsMatchTheScan: a live store, changed between every
// two snapshots (calls answered or ended, new calls, the oldest
// evicted), carries each snapshot's site columns on to the next, and
// the carried columns and the answers read from them equal what a scan
// of the new snapshot's dialogs gives; a RowColumn too, reading only the
// dialogs changed or added since.
func TestCarriedColumnsMatchTheScan(t *testing.T) {
	const kept = 1500
	st := newStore(t, Limits{Dialogs: kept, DialogBytes: 1 << 30, MessageBytes: 1 << 20})
	every := func(*Dialog) bool { return true }
	failed, err := Compile(`final_code == null or from_user ~ "^10"`)
	if err != nil {
		t.Fatal(err)
	}
	var m Parsed
	next := 0
	calls := func(n, upTo int) { // n new calls, each its first upTo messages
		for range n {
			addCallMessages(t, st, &m, next, 0, upTo)
			next++
		}
	}
	problems := 0
	calls(1200, 4) // answered, not ended
	calls(100, 1)  // ringing
	// A RowColumn's values of a dialog: its id, then one a transaction
	// (how many differs between dialogs and changes as a call goes on).
	reads := 0
	of := func(d *Dialog, vals []uint64) []uint64 {
		reads++
		vals = append(vals, d.ID)
		for i := range d.Txns {
			vals = append(vals, d.ID<<8|uint64(i))
		}
		return vals
	}
	for round := range 6 {
		sn := st.Snapshot()
		if round > 0 {
			checkCarry(t, sn)
		}
		reads = 0
		vals, ends, ok := RowColumn(sn, "test", of)
		if round > 0 && reads >= len(sn.Dialogs)/2 {
			t.Errorf("round %d: RowColumn read %d of %d dialogs, want only the changed and new", round, reads, len(sn.Dialogs))
		}
		var want []uint64
		var wantEnds []int32
		for _, d := range sn.Dialogs {
			want = of(d, want)
			wantEnds = append(wantEnds, int32(len(want)))
		}
		if !ok || !slices.Equal(vals, want) || !slices.Equal(ends, wantEnds) {
			t.Fatalf("round %d: RowColumn of %d values, %d rows (room %v); want %d, %d", round, len(vals), len(ends), ok, len(want), len(wantEnds))
		}
		for _, dim := range Dimensions {
			for range 2 { // the second reads a built (or carried) column
				if got, want := sn.Aggregate(nil, dim, 5), scanAggregate(sn.Dialogs, every, dim, 5); !reflect.DeepEqual(got, want) {
					t.Fatalf("round %d, Aggregate %s: got %+v, want %+v", round, dim, got, want)
				}
				if got, want := sn.GroupMetrics(nil, dim, 5), scanGroups(sn.Dialogs, every, dim, 5); !reflect.DeepEqual(got, want) {
					t.Fatalf("round %d, GroupMetrics %s: got %s, want %s", round, dim, groupingText(got), groupingText(want))
				}
			}
			// A filter on columned fields: answered from the filter and
			// key columns, both carried.
			if got, want := sn.GroupMetrics(failed, dim, 5), scanGroups(sn.Dialogs, func(d *Dialog) bool { return failed.Match(d) }, dim, 5); !reflect.DeepEqual(got, want) {
				t.Fatalf("round %d, GroupMetrics %s where %s: got %s, want %s", round, dim, failed, groupingText(got), groupingText(want))
			}
			if c := sn.carry.keys[dimIndex(dim)]; c == nil || c.rows != sn.rows {
				t.Fatalf("round %d: %s's column not kept for the next snapshot", round, dim)
			}
		}
		for _, src := range []string{`final_code >= 400 or from_user ~ "^10"`, `to_user == "2002" and final_code == null`} {
			got, _ := each(t, sn, src)
			if want := byDialogs(sn, src); !slices.Equal(got, want) {
				t.Fatalf("round %d, filter %s: %d dialogs, want %d", round, src, len(got), len(want))
			}
		}
		// Every filter's matched rows kept for the next snapshot, which
		// tests only its changed rows (a stale row fails the checks above).
		for _, src := range []string{failed.String(), `final_code >= 400 or from_user ~ "^10"`, `to_user == "2002" and final_code == null`} {
			if m := keptMatch(sn, src); m == nil || m.rows != sn.rows {
				t.Fatalf("round %d: the rows %s matched not kept for the next snapshot", round, src)
			}
		}
		for _, name := range ProblemNames() {
			mask := ProblemMask([]string{name})
			var got, want []uint64
			sn.Each(nil, mask, func(id uint64, _ *Dialog) { got = append(got, id) })
			for _, d := range sn.Dialogs {
				if AnyProblem(d, mask) {
					want = append(want, d.ID)
				}
			}
			if !slices.Equal(got, want) {
				t.Fatalf("round %d, problem %s: %d dialogs, want %d", round, name, len(got), len(want))
			}
			problems += len(want)
		}
		// Change the store: end some answered calls, answer some ringing
		// ones, add new calls past the bound (the oldest evicted).
		first := next - len(sn.Dialogs)
		for i := first + round*150; i < first+round*150+100; i++ {
			addCallMessages(t, st, &m, i, 4, 7)
		}
		for i := next - 100; i < next-60; i++ {
			addCallMessages(t, st, &m, i, 1, 4)
		}
		calls(200, 4)
		calls(20, 1)
	}
	if problems == 0 {
		t.Fatal("no dialog with a problem: the test wants the problem column to hold some")
	}
	if ev := st.DialogStats().Evicted; ev == 0 {
		t.Fatal("no dialog was evicted: the test wants the oldest gone between snapshots")
	}
}

// checkCarry checks that sn, a new snapshot of a changed store, carries
// the store's kept columns, and that they equal columns built from sn's
// dialogs. It leaves the kept columns as they were, to be carried by
// sn's answers.
func checkCarry(t *testing.T, sn *Snapshot) {
	t.Helper()
	view := &Snapshot{Dialogs: sn.Dialogs, rows: sn.rows, ages: sn.ages, carry: sn.carry}
	same := 0
	for i := range sn.Dialogs {
		if _, ok := sn.same(sn.carry.figs.rows, i); ok {
			same++
		}
	}
	if same == 0 || same == len(sn.Dialogs) {
		t.Fatalf("%d of %d dialogs unchanged since the kept columns: want some changed and some not", same, len(sn.Dialogs))
	}
	var rows groupRows
	if !view.carryFigures(&rows) {
		t.Fatal("the figure rows were not carried")
	}
	var want groupRows
	for _, d := range sn.Dialogs {
		want.addFigures(d)
	}
	if !slices.Equal(rows.shares, want.shares) || !slices.Equal(rows.samples, want.samples) {
		t.Fatalf("carried figure rows differ from the dialogs': %d shares, %d samples; want %d, %d", len(rows.shares), len(rows.samples), len(want.shares), len(want.samples))
	}
	cols := view.carryColumns()
	if cols == nil {
		t.Fatal("the filter columns were not carried")
	}
	if want := newColumns(sn.Dialogs); !slices.Equal(cols.rows, want.rows) || cols.users != want.users {
		t.Fatal("the carried filter columns differ from the dialogs'")
	}
	var pc, built problemColumn
	if !view.carryProblems(&pc) {
		t.Fatal("the problem column was not carried")
	}
	for _, d := range sn.Dialogs {
		built.sets = append(built.sets, problemSet(d))
	}
	if !slices.Equal(pc.sets, built.sets) {
		t.Fatal("the carried problem column differs from the dialogs'")
	}
	carried := 0
	for _, dim := range Dimensions {
		d := dimIndex(dim)
		var kc, built keyColumn
		k := view.carryKeys(&kc, d)
		if k == nil {
			t.Fatalf("%s's column was not carried", dim)
		}
		sn.carry.keys[d].k = k // back, for sn's answers to carry
		built.build(sn.Dialogs, dim)
		for r := range sn.Dialogs {
			got, want := columnValues(&kc, r), columnValues(&built, r)
			if !slices.Equal(got, want) {
				t.Fatalf("%s, dialog %d: carried keys %q, want %q", dim, sn.Dialogs[r].ID, got, want)
			}
		}
		carried++
	}
	if carried != len(Dimensions) {
		t.Fatalf("%d columns carried, want %d", carried, len(Dimensions))
	}
}

// columnValues are row r's values in kc.
func columnValues(kc *keyColumn, r int) []string {
	rows := groupRows{multi: kc.multi, ids: kc.ids, ends: kc.ends}
	var vs []string
	for _, id := range rows.keysOf(int32(r)) {
		vs = append(vs, kc.values[id])
	}
	slices.Sort(vs)
	return vs
}

// TestCarriedColumnsAcrossConcurrentSnapshots: two snapshots of a
// changing store asked at once (each call of a live store has its own)
// race for the kept columns and keyers; both answer as a scan would.
func TestCarriedColumnsAcrossConcurrentSnapshots(t *testing.T) {
	st := newStore(t, Limits{Dialogs: 800, DialogBytes: 1 << 30, MessageBytes: 1 << 20})
	every := func(*Dialog) bool { return true }
	var m Parsed
	for i := range 700 {
		addCallMessages(t, st, &m, i, 0, 4)
	}
	// A filter on columned fields: the two snapshots carry (or build)
	// the filter columns and the rows it matched at once.
	failed, err := Compile(`final_code == null or from_user ~ "^10"`)
	if err != nil {
		t.Fatal(err)
	}
	matchesFailed := func(d *Dialog) bool { return failed.Match(d) }
	ask := func(sn *Snapshot) error {
		for _, dim := range Dimensions {
			if got, want := sn.Aggregate(nil, dim, 3), scanAggregate(sn.Dialogs, every, dim, 3); !reflect.DeepEqual(got, want) {
				return fmt.Errorf("Aggregate %s: got %+v, want %+v", dim, got, want)
			}
			if got, want := sn.GroupMetrics(nil, dim, 3), scanGroups(sn.Dialogs, every, dim, 3); !reflect.DeepEqual(got, want) {
				return fmt.Errorf("GroupMetrics %s: got %s, want %s", dim, groupingText(got), groupingText(want))
			}
			if got, want := sn.Aggregate(failed, dim, 3), scanAggregate(sn.Dialogs, matchesFailed, dim, 3); !reflect.DeepEqual(got, want) {
				return fmt.Errorf("Aggregate %s where %s: got %+v, want %+v", dim, failed, got, want)
			}
		}
		// A RowColumn, carried (or built) by both at once.
		of := func(d *Dialog, vals []uint64) []uint64 { return append(vals, d.ID, uint64(len(d.Txns))) }
		vals, _, ok := RowColumn(sn, "test", of)
		var want []uint64
		for _, d := range sn.Dialogs {
			want = of(d, want)
		}
		if !ok || !slices.Equal(vals, want) {
			return fmt.Errorf("RowColumn: %d values (room %v), want %d", len(vals), ok, len(want))
		}
		return nil
	}
	next := 700
	for round := range 8 {
		a := st.Snapshot()
		addCallMessages(t, st, &m, next, 0, 4)
		addCallMessages(t, st, &m, next-500, 4, 7)
		next++
		b := st.Snapshot()
		errs := make(chan error, 2)
		for _, sn := range []*Snapshot{a, b} {
			go func() { errs <- ask(sn) }()
		}
		for range 2 {
			if err := <-errs; err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
		}
	}
}

// TestCarryToFewerDialogs: a store holding fewer dialogs than the kept
// columns' snapshot (its byte bound evicted more than was added) still
// carries them, here to a view of a later snapshot's first rows.
func TestCarryToFewerDialogs(t *testing.T) {
	st := newStore(t, Limits{DialogBytes: 1 << 30, MessageBytes: 1 << 20})
	var m Parsed
	for i := range 500 {
		addCallMessages(t, st, &m, i, 0, 1) // ringing: no PDD sample
	}
	st.Snapshot().GroupMetrics(nil, "final_code", 3)
	addCallMessages(t, st, &m, 500, 0, 1)
	sn := st.Snapshot()
	const n = 100
	view := &Snapshot{Dialogs: sn.Dialogs[:n], rows: rowsOf{first: sn.rows.first, epoch: sn.rows.epoch, n: n}, ages: sn.ages[:n], carry: sn.carry}
	var rows, want groupRows
	if !view.carryFigures(&rows) {
		t.Fatal("the figure rows were not carried")
	}
	for _, d := range view.Dialogs {
		want.addFigures(d)
	}
	if !slices.Equal(rows.shares, want.shares) || !slices.Equal(rows.samples, want.samples) {
		t.Fatalf("carried %d shares, %d samples; want %d, %d", len(rows.shares), len(rows.samples), len(want.shares), len(want.samples))
	}
}

// keptMatch is the carrier's rows filter src matched, or nil.
func keptMatch(sn *Snapshot, src string) (m *carriedMatch) {
	sn.locked(func(cr *carrier) {
		for _, c := range cr.matches {
			if c.src == src {
				m = c
			}
		}
	})
	return m
}

// TestKeptMatchesAreTheNewest holds the carrier to carriedMatches
// filters, the least recently kept dropped first, and to a filter's
// newest rows: an older snapshot's answer does not replace them.
func TestKeptMatchesAreTheNewest(t *testing.T) {
	st := newStore(t, Limits{Dialogs: 100, DialogBytes: 1 << 30, MessageBytes: 1 << 20})
	var m Parsed
	for i := range 50 {
		addCallMessages(t, st, &m, i, 0, 4)
	}
	older := st.Snapshot()
	addCallMessages(t, st, &m, 50, 0, 4)
	newer := st.Snapshot()
	srcs := []string{`from_user ~ "^1"`, `from_user ~ "^2"`, `to_user ~ "^2"`, `final_code == 200`, `final_code == null`}
	for _, src := range srcs {
		each(t, newer, src)
	}
	for i, src := range srcs {
		if got := keptMatch(newer, src); (got != nil) != (i > 0) {
			t.Fatalf("filter %d of %d kept: %v; want the last %d kept", i+1, len(srcs), got != nil, carriedMatches)
		}
	}
	each(t, older, srcs[4])
	if got := keptMatch(newer, srcs[4]); got == nil || got.rows != newer.rows {
		t.Fatal("an older snapshot's matched rows replaced a newer one's")
	}
}

// FuzzCarriedMatches: for any filter that compiles, a live store's
// snapshots, each carrying on the rows the filter matched on the one
// before (matchRows) while calls are answered, ended, added and evicted
// between them, select the dialogs the filter selects on each dialog.
func FuzzCarriedMatches(f *testing.F) {
	for _, s := range []string{`final_code == null or from_user ~ "^10"`, `to_user == "2002" and final_code >= 200`, `not from_user ~ "5$" and final_code == null`, `has_ack`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		e, err := Compile(src)
		if err != nil {
			return
		}
		carried := !e.MatchesAll() && e.ReadsOnly(isColumned)
		st := newStore(t, Limits{Dialogs: 120, DialogBytes: 1 << 30, MessageBytes: 1 << 20})
		var m Parsed
		sent := map[int]int{} // messages of each call's ladder sent
		send := func(i, upTo int) {
			upTo = min(upTo, len(ladder(i)))
			addCallMessages(t, st, &m, i, sent[i], upTo)
			sent[i] = upTo
		}
		next := 0
		for ; next < 100; next++ {
			send(next, 1+next%4) // ringing, some answered
		}
		for round := range 4 {
			sn := st.Snapshot()
			got, _ := each(t, sn, src)
			if want := byDialogs(sn, src); !slices.Equal(got, want) {
				t.Fatalf("round %d, %q: Each visits %d dialogs %v, the dialogs match %d %v", round, src, len(got), head(got), len(want), head(want))
			}
			if k := keptMatch(sn, src); carried && (k == nil || k.rows != sn.rows) {
				t.Fatalf("round %d, %q: the matched rows not kept for the next snapshot", round, src)
			}
			for i := next - 90 + round*7; i < next-90+round*7+15; i++ {
				send(i, sent[i]+3) // answered, acknowledged, ended
			}
			for range 30 { // past the bound: the oldest evicted
				send(next, 1+next%3)
				next++
			}
		}
	})
}
