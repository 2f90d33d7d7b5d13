package sip

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"
)

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

// TestFirstAsksOnALiveStore: a live store's new snapshots (INVITEs
// failed, answered or still ringing, some answered later, the oldest
// evicted, one answer from a clock past UnixNano's range) list their
// failures in a window, on their first ask from the failures carried
// from the snapshot before, as a read of every dialog does, bounds
// included or not as EachFailure says; and count their timeline from
// the marks carried from the snapshot before (kept at each first ask) as
// the two passes over the dialogs do.
func TestFirstAsksOnALiveStore(t *testing.T) {
	st := newStore(t, Limits{Dialogs: 300, DialogBytes: 1 << 30, MessageBytes: 1 << 22})
	rng := rand.New(rand.NewPCG(5, 3))
	at := time.Unix(1000, 0)
	n := 0
	var ringing []string
	failures := 0
	for round := range 10 {
		for range 80 {
			at = at.Add(time.Duration(rng.IntN(3000)) * time.Millisecond)
			id := fmt.Sprintf("f%d", n)
			n++
			addRaw(t, st, at, req("INVITE", id, 1))
			switch rng.IntN(3) {
			case 0:
				addRaw(t, st, at.Add(time.Second), resp([]int{404, 486, 503}[rng.IntN(3)], "INVITE", id, 1))
			case 1:
				addRaw(t, st, at.Add(time.Second), resp(200, "INVITE", id, 1))
			default:
				ringing = append(ringing, id)
			}
		}
		for len(ringing) > 20 { // answered later: their dialogs change
			addRaw(t, st, at, resp(480, "INVITE", ringing[0], 1))
			ringing = ringing[1:]
		}
		if round == 4 {
			id := fmt.Sprintf("f%d", n)
			n++
			addRaw(t, st, at, req("INVITE", id, 1))
			addRaw(t, st, time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC), resp(486, "INVITE", id, 1))
		}
		sn := st.Snapshot()
		d := sn.Dialogs[rng.IntN(len(sn.Dialogs))]
		edge := d.FinalAt
		if edge.IsZero() {
			edge = at
		}
		start := sn.Dialogs[0].Created
		for _, w := range [][2]time.Time{{}, {edge, {}}, {{}, edge}, {edge.Add(-time.Minute), edge}, {start.Add(time.Minute), at}} {
			var want, got []uint64
			for _, d := range sn.Dialogs {
				if d.FinalCode >= 400 && !d.FinalAt.IsZero() && (w[0].IsZero() || !d.FinalAt.Before(w[0])) && (w[1].IsZero() || d.FinalAt.Before(w[1])) {
					want = append(want, d.ID)
				}
			}
			sn.EachFailure(w[0], w[1], func(d *Dialog) { got = append(got, d.ID) })
			if !slices.Equal(got, want) {
				t.Fatalf("round %d, since %v, until %v: %v, want %v", round, w[0], w[1], got, want)
			}
			failures += len(got)
		}
		// The timeline without a filter: from round 1 on, its first ask
		// reads the marks carried from the snapshot before.
		every := func(*Dialog) bool { return true }
		for ask := range 2 {
			width := time.Duration(1+rng.IntN(300)) * time.Second
			got, _, err := sn.Timeline(nil, []time.Duration{width}, time.Time{}, time.Time{}, 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			if want := timelineTwoPasses(sn.Dialogs, every, width, time.Time{}, time.Time{}); !reflect.DeepEqual(got, want) {
				t.Fatalf("round %d, timeline ask %d: got %+v, want %+v", round, ask, got, want)
			}
			kept := false
			sn.locked(func(cr *carrier) {
				for _, rc := range cr.rowCols {
					kept = kept || rc.key == marksKey && rc.rows == sn.rows
				}
			})
			if !kept {
				t.Fatalf("round %d, timeline ask %d: the marks not kept for the next snapshot", round, ask)
			}
		}
	}
	if failures == 0 || st.DialogStats().Evicted == 0 {
		t.Fatalf("%d failures listed, %d dialogs evicted: the test wants both", failures, st.DialogStats().Evicted)
	}
}

// TestRowColumnWithoutRoom: a snapshot whose column share is spent
// builds no RowColumn, and the answers that read one (the failures of a
// window, the timeline) read the dialogs instead and are the same.
func TestRowColumnWithoutRoom(t *testing.T) {
	st := newStore(t, Limits{})
	at := time.Unix(1000, 0)
	for i := range 200 {
		id := fmt.Sprintf("n%d", i)
		addRaw(t, st, at.Add(time.Duration(i)*time.Second), req("INVITE", id, 1))
		addRaw(t, st, at.Add(time.Duration(i)*time.Second+time.Millisecond), resp([]int{200, 486, 503}[i%3], "INVITE", id, 1))
	}
	full := st.Snapshot()
	sn := &Snapshot{Dialogs: full.Dialogs} // a fresh view of the same dialogs, share 0
	if _, _, ok := RowColumn(sn, "test", func(d *Dialog, vals []uint64) []uint64 { return append(vals, d.ID) }); ok {
		t.Fatal("a RowColumn built without room")
	}
	since, until := at.Add(50*time.Second), at.Add(120*time.Second)
	var got, want []uint64
	sn.EachFailure(since, until, func(d *Dialog) { got = append(got, d.ID) })
	full.EachFailure(since, until, func(d *Dialog) { want = append(want, d.ID) })
	if !slices.Equal(got, want) || len(want) == 0 {
		t.Fatalf("failures without room %v, with %v", got, want)
	}
	g, _, err := sn.Timeline(nil, []time.Duration{time.Minute}, time.Time{}, time.Time{}, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if w, _, _ := full.Timeline(nil, []time.Duration{time.Minute}, time.Time{}, time.Time{}, 1000); !reflect.DeepEqual(g, w) {
		t.Fatalf("timeline without room %+v, with %+v", g, w)
	}
	if sn.site.bytes != 0 || sn.site.marks.ends != nil {
		t.Fatalf("%d bytes of columns held without room", sn.site.bytes)
	}
}
