package sip

import (
	"reflect"
	"testing"

	"fieldtap/services/filter"
)

// TestSiteColumnsKeepToTheirShare: a snapshot whose columns have no more
// room builds none past the one that filled it, and its answers, read
// from the scan instead, are the same.
func TestSiteColumnsKeepToTheirShare(t *testing.T) {
	st := newStore(t, Limits{})
	addAnsweredCalls(t, st, 3000)
	e, err := Compile(`final_code >= 200`)
	if err != nil {
		t.Fatal(err)
	}
	every := func(*Dialog) bool { return true }
	for _, share := range []int64{1, 1 << 40} {
		sn := &Snapshot{Dialogs: st.Snapshot().Dialogs} // a fresh view of the same dialogs
		sn.site.share = share
		for range 3 {
			for _, dim := range Dimensions {
				for _, f := range []struct {
					e     *filter.Expr
					match func(*Dialog) bool
				}{{nil, every}, {e, func(d *Dialog) bool { return e.Match(d) }}} {
					if got, want := sn.Aggregate(f.e, dim, 5), scanAggregate(sn.Dialogs, f.match, dim, 5); !reflect.DeepEqual(got, want) {
						t.Fatalf("share %d, Aggregate %s: got %+v, want %+v", share, dim, got, want)
					}
					if got, want := sn.GroupMetrics(f.e, dim, 5), scanGroups(sn.Dialogs, f.match, dim, 5); !reflect.DeepEqual(got, want) {
						t.Fatalf("share %d, GroupMetrics %s: got %s, want %s", share, dim, groupingText(got), groupingText(want))
					}
				}
			}
			sn.Each(nil, ProblemMask(ProblemNames()), func(uint64, *Dialog) {})
		}
		built := len(sn.site.keys)
		for _, b := range []bool{sn.cols != nil, sn.site.figs.rows.shares != nil, sn.site.problems.sets != nil} {
			if b {
				built++
			}
		}
		for _, kc := range sn.site.keys {
			if kc.ix.accs != nil {
				built++
			}
		}
		switch {
		case sn.site.bytes <= 0:
			t.Errorf("share %d: the columns built hold %d bytes", share, sn.site.bytes)
		case share == 1 && built != 1:
			t.Errorf("share 1: %d columns built, want the one that filled it", built)
		case share > 1 && built < len(Dimensions)+3:
			t.Errorf("share %d: only %d columns built", share, built)
		}
	}
}

// TestSortedSamplesKeepToTheShare: an index built with the last room
// leaves none for every sample sorted; the answer selects the overall
// percentiles from the rows instead, the same as a scan.
func TestSortedSamplesKeepToTheShare(t *testing.T) {
	st := newStore(t, Limits{})
	addAnsweredCalls(t, st, 3000)
	every := func(*Dialog) bool { return true }
	for _, dim := range []string{"final_code", "participant_ip"} {
		sn := &Snapshot{Dialogs: st.Snapshot().Dialogs}
		sn.site.share = 1 << 40
		sn.GroupMetrics(nil, dim, 2) // the keys and the figure rows
		sn.site.share = sn.site.bytes + 1
		if got, want := sn.GroupMetrics(nil, dim, 2), scanGroups(sn.Dialogs, every, dim, 2); !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: got %s, want %s", dim, groupingText(got), groupingText(want))
		}
		if kc := sn.site.keys[dim]; kc.ix.accs == nil || sn.site.figs.sorted != nil {
			t.Fatalf("%s: index built %v, every sample sorted %v: want the index and no sorted samples", dim, kc.ix.accs != nil, sn.site.figs.sorted != nil)
		}
	}
}
