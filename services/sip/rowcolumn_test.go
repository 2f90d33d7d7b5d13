package sip

import (
	"fmt"
	"slices"
	"testing"
)

// TestRowColumnCarried: a live store, changed between snapshots (calls
// answered and ended, new calls, the oldest evicted), carries a
// RowColumn on, and each snapshot's column equals one built from its
// dialogs, while only the dialogs changed or added since are read.
func TestRowColumnCarried(t *testing.T) {
	const kept = 1500
	st := newStore(t, Limits{Dialogs: kept, DialogBytes: 1 << 30, MessageBytes: 1 << 20})
	var m Parsed
	next := 0
	calls := func(n, upTo int) {
		for range n {
			addCallMessages(t, st, &m, next, 0, upTo)
			next++
		}
	}
	// A dialog's values: its id, then one a transaction (how many
	// differs between dialogs and changes as a call goes on).
	reads := 0
	of := func(d *Dialog, vals []uint64) []uint64 {
		reads++
		vals = append(vals, d.ID)
		for i := range d.Txns {
			vals = append(vals, d.ID<<8|uint64(i))
		}
		return vals
	}
	calls(1200, 4)
	calls(100, 1)
	for round := range 6 {
		sn := st.Snapshot()
		reads = 0
		vals, ends, ok := RowColumn(sn, "test", of)
		if !ok {
			t.Fatalf("round %d: no room", round)
		}
		if round > 0 && reads >= len(sn.Dialogs)/2 {
			t.Errorf("round %d: %d of %d dialogs read, want only the changed and new", round, reads, len(sn.Dialogs))
		}
		var want []uint64
		var wantEnds []int32
		for _, d := range sn.Dialogs {
			want = of(d, want)
			wantEnds = append(wantEnds, int32(len(want)))
		}
		if !slices.Equal(vals, want) || !slices.Equal(ends, wantEnds) {
			t.Fatalf("round %d: carried column of %d values, %d rows; want %d, %d", round, len(vals), len(ends), len(want), len(wantEnds))
		}
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
	if ev := st.DialogStats().Evicted; ev == 0 {
		t.Fatal("no dialog was evicted: the test wants the oldest gone between snapshots")
	}
}

// TestRowColumnKeys: a column is carried only to its own key, and the
// carrier keeps carriedRowColumns keys, the newest.
func TestRowColumnKeys(t *testing.T) {
	st := newStore(t, Limits{DialogBytes: 1 << 30, MessageBytes: 1 << 20})
	var m Parsed
	for i := range 50 {
		addCallMessages(t, st, &m, i, 0, 2)
	}
	id := func(d *Dialog, vals []uint64) []uint64 { return append(vals, d.ID) }
	keys := []string{"a", "b", "c", "d", "e"}
	for _, k := range keys {
		RowColumn(st.Snapshot(), k, id)
	}
	addCallMessages(t, st, &m, 50, 0, 2)
	sn := st.Snapshot()
	var got []string
	sn.locked(func(cr *carrier) {
		for _, rc := range cr.rowCols {
			got = append(got, rc.key)
		}
	})
	if want := keys[len(keys)-carriedRowColumns:]; !slices.Equal(got, want) {
		t.Fatalf("kept keys %v, want %v", got, want)
	}
	reads := 0
	other := func(d *Dialog, vals []uint64) []uint64 { reads++; return append(vals, d.ID+1) }
	vals, _, _ := RowColumn(sn, "b", other) // another function under a kept key: carried
	if reads != 1 || vals[0] != sn.Dialogs[0].ID {
		t.Fatalf("key b: %d dialogs read, first value %d; want 1 and the carried %d", reads, vals[0], sn.Dialogs[0].ID)
	}
	reads = 0
	RowColumn(sn, "a", other) // dropped: built
	if reads != len(sn.Dialogs) {
		t.Fatalf("key a: %d dialogs read, want all %d", reads, len(sn.Dialogs))
	}
}

// TestRowColumnAcrossConcurrentSnapshots: two snapshots, the second
// taken after the store changed, build and carry one key's column at
// once; each equals its own dialogs' (run with -race).
func TestRowColumnAcrossConcurrentSnapshots(t *testing.T) {
	st := newStore(t, Limits{Dialogs: 800, DialogBytes: 1 << 30, MessageBytes: 1 << 20})
	var m Parsed
	for i := range 700 {
		addCallMessages(t, st, &m, i, 0, 4)
	}
	of := func(d *Dialog, vals []uint64) []uint64 { return append(vals, d.ID, uint64(len(d.Txns))) }
	check := func(sn *Snapshot) error {
		vals, _, ok := RowColumn(sn, "test", of)
		var want []uint64
		for _, d := range sn.Dialogs {
			want = of(d, want)
		}
		if !ok || !slices.Equal(vals, want) {
			return fmt.Errorf("%d values (room %v), want %d", len(vals), ok, len(want))
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
			go func() { errs <- check(sn) }()
		}
		for range 2 {
			if err := <-errs; err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
		}
	}
}
