package sipcompare

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"fieldtap/services/rtp"
	"fieldtap/services/sip"
)

func dialogs(n int, methods ...string) []*sip.Dialog {
	out := make([]*sip.Dialog, n)
	for i := range out {
		out[i] = &sip.Dialog{CallID: strings.Repeat("x", i+1), Methods: methods}
	}
	return out
}

func streams(mos ...float64) []rtp.StreamView {
	out := make([]rtp.StreamView, len(mos))
	for i, m := range mos {
		if m > 0 {
			out[i].Value = &m
		}
	}
	return out
}

func find(t *testing.T, c Comparison, family, key string) Row {
	t.Helper()
	for _, r := range c.Rows {
		if r.Family == family && r.Key == key {
			return r
		}
	}
	t.Fatalf("no row %s/%s in %+v", family, key, c.Rows)
	return Row{}
}

// TestCompareRanksByMovement: 40 OPTIONS dialogs, then 30 OPTIONS and 10
// INVITE+ACK; 20 streams at 4.4, then 10 at 4.4 and 10 at 3.3. The
// INVITE share appears (movement 1) and outranks the OPTIONS share's
// fall to 0.75 (movement 0.25); the dialog count did not move. Without
// a final response no ratio has a basis: null, unranked, and why.
func TestCompareRanksByMovement(t *testing.T) {
	a := Side{Dialogs: dialogs(40, "OPTIONS"), Streams: streams(repeat(4.4, 20)...)}
	b := Side{Dialogs: append(dialogs(30, "OPTIONS"), dialogs(10, "INVITE", "ACK")...), Streams: streams(append(repeat(4.4, 10), repeat(3.3, 10)...)...)}
	c := Compare(a, b, Options{})
	inv, opt, n := find(t, c, FamilyMethod, "INVITE"), find(t, c, FamilyMethod, "OPTIONS"), find(t, c, FamilyDialogs, "")
	if inv.Movement != 1 || inv.ChangePct != nil || *inv.CountAfter != 10 || opt.Movement != 0.25 || *opt.ChangePct != -25 || n.Movement != 0 {
		t.Errorf("INVITE %+v, OPTIONS %+v, dialogs %+v", inv, opt, n)
	}
	if inv.Rank == 0 || opt.Rank == 0 || inv.Rank > opt.Rank || opt.Rank > n.Rank {
		t.Errorf("ranks INVITE %d, OPTIONS %d, dialogs %d: want by movement", inv.Rank, opt.Rank, n.Rank)
	}
	if band := find(t, c, FamilyMOSBand, "many dissatisfied"); *band.CountBefore != 0 || *band.CountAfter != 10 || band.Rank == 0 {
		t.Errorf("3.3 is G.107's many-dissatisfied band: %+v", band)
	}
	if asr := find(t, c, FamilyASR, ""); asr.Before != nil || asr.Rank != 0 || !strings.HasPrefix(asr.Note, "before: no call attempt") {
		t.Errorf("asr without attempts %+v", asr)
	}
	for i, r := range c.Rows {
		if r.Rank != 0 && r.Rank != i+1 || r.Rank == 0 && i+1 < len(c.Rows) && c.Rows[i+1].Rank != 0 {
			t.Fatalf("row %d %+v: ranked rows first, numbered in order", i, r)
		}
	}
}

// TestCompareGuardsSmallPopulations: 3 dialogs against 40 move every
// share, and none ranks under the default guard; a guard of 3 ranks them.
func TestCompareGuardsSmallPopulations(t *testing.T) {
	a, b := Side{Dialogs: dialogs(3, "INVITE")}, Side{Dialogs: dialogs(40, "OPTIONS")}
	for _, r := range Compare(a, b, Options{}).Rows {
		if r.Rank != 0 {
			t.Errorf("%+v ranked over 3 dialogs", r)
		}
	}
	r := find(t, Compare(a, b, Options{}), FamilyMethod, "INVITE")
	if r.Note != "too few: 3 dialogs before, 40 after (min_population 20)" {
		t.Errorf("note %q", r.Note)
	}
	if r := find(t, Compare(a, b, Options{MinPopulation: 3}), FamilyMethod, "INVITE"); r.Rank == 0 || r.Note != "" {
		t.Errorf("with a guard of 3: %+v", r)
	}
}

func repeat(v float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// TestCarriedCountsEveryMethod: the methods dialogs carried, counted in
// the short list and, past it, in the map, are what one map counts, for
// vocabularies below and above the list's length (a sender inventing
// methods), in strings the store shares and in copies.
func TestCarriedCountsEveryMethod(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		names := make([]string, 1+rng.IntN(3*nearMethods))
		for i := range names {
			names[i] = "M" + strconv.Itoa(i)
		}
		ds := make([]*sip.Dialog, rng.IntN(300))
		want := map[string]int{}
		for i := range ds {
			var ms []string
			for range rng.IntN(4) {
				m := names[rng.IntN(len(names))]
				if rng.IntN(2) == 0 {
					m = strings.Clone(m)
				}
				if !slices.Contains(ms, m) {
					ms = append(ms, m)
					want[m]++
				}
			}
			ds[i] = &sip.Dialog{Methods: ms}
		}
		got := carried.count(Side{Dialogs: ds})
		if len(got) != len(want) {
			t.Fatalf("round %d: %d methods counted, want %d: %v", round, len(got), len(want), got)
		}
		for i, b := range got {
			if b.Count != want[b.Value] {
				t.Fatalf("round %d: %s counted %d, want %d", round, b.Value, b.Count, want[b.Value])
			}
			if i > 0 && (got[i-1].Count < b.Count || got[i-1].Count == b.Count && got[i-1].Value > b.Value) {
				t.Fatalf("round %d: not largest first, ties by name: %v", round, got)
			}
		}
	}
}

// TestOneListBothSides: a list compared with itself (compare_captures
// without sides) is counted once, and answers as a copy of it would,
// rows and cut values alike (60 methods, past MaxCategories, on each).
func TestOneListBothSides(t *testing.T) {
	var ds []*sip.Dialog
	for i := range 60 {
		d := dialogs(1+i%7, "INVITE", "M"+strconv.Itoa(i))
		for j, dl := range d {
			dl.FinalCode = []int{200, 486, 503}[(i+j)%3]
			dl.HasInvite = true
		}
		ds = append(ds, d...)
	}
	one := Compare(Side{Dialogs: ds, Streams: streams(4.4, 3.1, 0)}, Side{Dialogs: ds, Streams: streams(4.4, 3.1, 0)}, Options{})
	two := Compare(Side{Dialogs: ds, Streams: streams(4.4, 3.1, 0)}, Side{Dialogs: slices.Clone(ds), Streams: streams(4.4, 3.1, 0)}, Options{})
	if !reflect.DeepEqual(one, two) {
		t.Errorf("one list:\n%+v\na copy:\n%+v", one, two)
	}
	if len(two.Cut) != 2 || two.Cut[0].Side != "before" || two.Cut[1].Side != "after" {
		t.Errorf("cut %+v: want the methods past the bound on each side", two.Cut)
	}
}
