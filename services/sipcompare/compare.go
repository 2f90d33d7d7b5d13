package sipcompare

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sync/atomic"

	"fieldtap/services/rtp"
	"fieldtap/services/sip"
)

// Bounds and defaults of a comparison.
const (
	// DefaultMinPopulation is the guard: below 20 attempts one call moves
	// a ratio by 5 points or more, which is noise, not a change.
	DefaultMinPopulation = 20
	// DefaultTop and MaxTop bound the endpoints and User-Agents taken from
	// each side's head: the union of both heads is compared.
	DefaultTop = 5
	MaxTop     = 50
	// MaxCategories bounds the methods and final codes taken from each
	// side (largest first): the vocabulary is a dozen methods and a few
	// dozen codes, and a sender can invent more; past it they are counted
	// in Comparison.Cut.
	MaxCategories = 50
)

// Families, in the order unranked rows are listed.
const (
	FamilyDialogs    = "dialogs"     // count of dialogs
	FamilyMethod     = "method"      // share of dialogs that carried a method
	FamilyFinalCode  = "final_code"  // share of dialogs by final code
	FamilyASR        = "asr"         // sip.CallMetrics.ASR
	FamilyNER        = "ner"         // sip.CallMetrics.NER
	FamilyPDDp50     = "pdd_p50"     // sip.CallMetrics.PDDp50
	FamilyPDDp95     = "pdd_p95"     // sip.CallMetrics.PDDp95
	FamilyACD        = "acd"         // sip.CallMetrics.ACD
	FamilyStreams    = "rtp_streams" // count of RTP streams
	FamilyMOSBand    = "mos_band"    // share of streams by G.107 band
	FamilyEndpoint   = "endpoint"    // share of dialogs an address took part in
	FamilyUserAgent  = "user_agent"  // share of dialogs by first User-Agent (sender text)
	NoScore          = "no score"    // the mos_band of a stream without a MOS
	unitCount        = "count"
	unitShare        = "share"
	populationDialog = "dialogs"
	populationStream = "streams"
)

var familyOrder = []string{FamilyDialogs, FamilyMethod, FamilyFinalCode, FamilyASR, FamilyNER, FamilyPDDp50, FamilyPDDp95, FamilyACD,
	FamilyStreams, FamilyMOSBand, FamilyEndpoint, FamilyUserAgent}

// Side is what one side holds: its dialogs (a snapshot's, already
// chosen by window and port) and its confirmed RTP streams.
type Side struct {
	Dialogs []*sip.Dialog
	Streams []rtp.StreamView
	// Count, when set, counts Dialogs by one of sip.Dimensions as
	// sip.Aggregate does, every bucket: from columns kept beside them (a
	// snapshot's, sip.Snapshot.AggregateRows) instead of every dialog.
	Count func(dim string) []sip.Bucket
	// Metrics, when set, is Dialogs' call figures as a sip.MetricsAcc of
	// them gives, from such columns.
	Metrics func() sip.CallMetrics
}

// Options are a comparison's guard and head size; zero takes the default.
type Options struct {
	MinPopulation int
	Top           int
}

// Row is one figure on both sides.
type Row struct {
	Family string
	Key    string // the category (a method, a code, a band, an address, a User-Agent); empty for a whole-side figure
	// Text is set when Key is sender text (a User-Agent).
	Text          bool
	Unit          string // count, share (of the population), ratio, ms, s
	Before, After *float64
	// CountBefore and CountAfter are a share's dialogs or streams.
	CountBefore, CountAfter *int
	PopBefore, PopAfter     int
	PopUnit                 string // what the population counts: dialogs, attempts, samples, streams
	Change                  *float64
	ChangePct               *float64 // relative to Before, in %; nil when Before is 0 or nil
	// Movement is |After − Before| / max(|Before|, |After|), 0 to 1: a
	// scale shared by counts, shares, ratios and times.
	Movement float64
	Rank     int    // 1 is the largest movement; 0 when not ranked
	Note     string // why a row is not ranked
}

// Cut is a side's values of a family left out by a bound.
type Cut struct {
	Family string
	Side   string // before or after
	Values int
}

// Comparison is every row, ranked rows first by movement, then the
// unranked in family order.
type Comparison struct {
	Rows []Row
	Cut  []Cut
}

// Compare pairs the figures of a (before) and b (after).
func Compare(a, b Side, o Options) Comparison {
	if o.MinPopulation <= 0 {
		o.MinPopulation = DefaultMinPopulation
	}
	if o.Top <= 0 {
		o.Top = DefaultTop
	}
	o.Top = min(o.Top, MaxTop)
	var out Comparison
	na, nb := len(a.Dialogs), len(b.Dialogs)
	out.add(countRow(FamilyDialogs, na, nb, populationDialog))
	out.shares(FamilyMethod, a, b, carried, MaxCategories)
	out.shares(FamilyFinalCode, a, b, byDimension("final_code"), MaxCategories)
	ma := metricsOf(a)
	mb := ma
	if !sameDialogs(a.Dialogs, b.Dialogs) {
		mb = metricsOf(b)
	}
	for _, m := range []struct {
		family string
		a, b   sip.Metric
		pop    string
	}{{FamilyASR, ma.ASR, mb.ASR, "attempts"}, {FamilyNER, ma.NER, mb.NER, "attempts"},
		{FamilyPDDp50, ma.PDDp50, mb.PDDp50, "samples"}, {FamilyPDDp95, ma.PDDp95, mb.PDDp95, "samples"},
		{FamilyACD, ma.ACD, mb.ACD, "answered calls"}} {
		out.add(metricRow(m.family, m.a, m.b, m.pop))
	}
	out.add(countRow(FamilyStreams, len(a.Streams), len(b.Streams), populationStream))
	out.mosBands(a.Streams, b.Streams)
	out.shares(FamilyEndpoint, a, b, byDimension("participant_ip"), o.Top)
	out.shares(FamilyUserAgent, a, b, byDimension("user_agent"), o.Top)
	out.rank(o.MinPopulation)
	return out
}

func (c *Comparison) add(r Row) { c.Rows = append(c.Rows, r) }

func metricsOf(s Side) sip.CallMetrics {
	if s.Metrics != nil {
		return s.Metrics()
	}
	var acc sip.MetricsAcc
	for _, d := range s.Dialogs {
		acc.Add(d)
	}
	return acc.Result()
}

func countRow(family string, a, b int, pop string) Row {
	fa, fb := float64(a), float64(b)
	return Row{Family: family, Unit: unitCount, Before: &fa, After: &fb, PopBefore: a, PopAfter: b, PopUnit: pop}
}

func metricRow(family string, a, b sip.Metric, pop string) Row {
	r := Row{Family: family, Unit: a.Unit, Before: a.Value, After: b.Value, PopBefore: a.Population, PopAfter: b.Population, PopUnit: pop}
	switch {
	case a.Value == nil:
		r.Note = "before: " + a.NullReason
	case b.Value == nil:
		r.Note = "after: " + b.NullReason
	}
	return r
}

// counter counts one side's dialogs per value, largest first, ties by
// value; text reports whether a value is sender text.
type counter struct {
	count func(s Side) []sip.Bucket
	text  func(v string) bool
}

// byDimension counts by one of sip.Dimensions (sip.Aggregate).
func byDimension(dim string) counter {
	return counter{
		// Every dialog (nil): the sides are chosen before the comparison,
		// and a predicate would have Aggregate warm the fields filters read.
		count: func(s Side) []sip.Bucket {
			if s.Count != nil {
				return s.Count(dim)
			}
			return sip.Aggregate(s.Dialogs, nil, dim, math.MaxInt).Buckets
		},
		text: func(v string) bool { return sip.TextDimension(dim) && v != sip.NoValue },
	}
}

// carried counts the dialogs that carried each method (a REGISTER then
// an INVITE on one Call-ID counts in both): the method dimension is only
// the first, which hides the calls of a dialog a REGISTER opened.
var carried = counter{
	count: func(s Side) []sip.Bucket {
		var n methodCounts
		ds := s.Dialogs
		for i := 0; i < len(ds); i += warmBlock {
			block := ds[i:min(i+warmBlock, len(ds))]
			warmMethods(block)
			for _, d := range block {
				for _, m := range d.Methods {
					n.add(m)
				}
			}
		}
		out := n.near
		for v, c := range n.far {
			out = append(out, sip.Bucket{Value: v, Count: c})
		}
		slices.SortFunc(out, func(a, b sip.Bucket) int { return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Value, b.Value)) })
		return out
	},
	text: func(string) bool { return false },
}

// warmBlock is how many dialogs warmMethods reads ahead.
const warmBlock = 64

// warmMethods reads each dialog's first and last method (the dialog,
// then its list's array) in one loop of loads independent from one
// dialog to the next, so their cache misses overlap (at 100,000 dialogs
// most are misses); counting, each waits for the one before.
func warmMethods(ds []*sip.Dialog) {
	var s int
	for _, d := range ds {
		if n := len(d.Methods); n > 0 {
			s += len(d.Methods[0]) + len(d.Methods[n-1]) // the list may span two cache lines
		}
	}
	warmSink.Add(int64(s))
}

// warmSink keeps warmMethods' reads from being optimised away.
var warmSink atomic.Int64

// nearMethods is how many method names are counted in a list searched
// in order: the dozen methods of a site, whose names the store shares
// (a comparison of one pointer each). A hash of every name a dialog
// carried cost more than the rest of its counting (5 ms a side at
// 100,000 dialogs); names past the list (a sender inventing methods)
// are counted in a map.
const nearMethods = 16

type methodCounts struct {
	near []sip.Bucket
	far  map[string]int
}

func (n *methodCounts) add(m string) {
	for i := range n.near {
		if n.near[i].Value == m {
			n.near[i].Count++
			return
		}
	}
	if len(n.near) < nearMethods {
		n.near = append(n.near, sip.Bucket{Value: m, Count: 1})
		return
	}
	if n.far == nil {
		n.far = map[string]int{}
	}
	n.far[m]++
}

// shares compares the share of each side's dialogs per value, for the
// union of the head (at most head values, largest first) of each side.
func (c *Comparison) shares(family string, a, b Side, by counter, head int) {
	ca, ha := c.counts(family, "before", a, by, head)
	var cb map[string]int
	var hb []string
	if sameDialogs(a.Dialogs, b.Dialogs) {
		// Both sides one list (compare_captures without sides): counted
		// once, its values past the head noted for each side.
		cb, hb = ca, ha
		if n := len(c.Cut); n > 0 && c.Cut[n-1].Family == family && c.Cut[n-1].Side == "before" {
			c.Cut = append(c.Cut, Cut{Family: family, Side: "after", Values: c.Cut[n-1].Values})
		}
	} else {
		cb, hb = c.counts(family, "after", b, by, head)
	}
	keys := slices.Clone(ha)
	for _, k := range hb {
		if !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	for _, k := range keys {
		r := shareRow(family, ca[k], len(a.Dialogs), cb[k], len(b.Dialogs), populationDialog)
		r.Key, r.Text = k, by.text(k)
		c.add(r)
	}
}

// sameDialogs is whether a and b are one list: the same array and
// length, so every count of one is the other's.
func sameDialogs(a, b []*sip.Dialog) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// counts is every value's dialogs on one side and its head, noting the
// values past the head.
func (c *Comparison) counts(family, side string, s Side, by counter, head int) (map[string]int, []string) {
	bs := by.count(s)
	n := make(map[string]int, len(bs))
	var keys []string
	for i, bk := range bs {
		n[bk.Value] = bk.Count
		if i < head {
			keys = append(keys, bk.Value)
		}
	}
	if over := len(bs) - head; over > 0 {
		c.Cut = append(c.Cut, Cut{Family: family, Side: side, Values: over})
	}
	return n, keys
}

func shareRow(family string, a, popA, b, popB int, pop string) Row {
	r := Row{Family: family, Unit: unitShare, CountBefore: &a, CountAfter: &b, PopBefore: popA, PopAfter: popB, PopUnit: pop}
	if popA > 0 {
		v := float64(a) / float64(popA)
		r.Before = &v
	} else {
		r.Note = "before: no " + pop
	}
	if popB > 0 {
		v := float64(b) / float64(popB)
		r.After = &v
	} else if r.Note == "" {
		r.Note = "after: no " + pop
	}
	return r
}

// mosBands compares the share of each side's streams per G.107 band, and
// of those without a score (an ungrounded codec, or too few packets).
func (c *Comparison) mosBands(a, b []rtp.StreamView) {
	band := func(ss []rtp.StreamView) []int {
		n := make([]int, len(rtp.SatisfactionBands)+1)
		for _, s := range ss {
			if s.Value == nil {
				n[len(rtp.SatisfactionBands)]++
				continue
			}
			n[rtp.BandOf(*s.Value)]++
		}
		return n
	}
	na, nb := band(a), band(b)
	for i := range na {
		r := shareRow(FamilyMOSBand, na[i], len(a), nb[i], len(b), populationStream)
		r.Key = NoScore
		if i < len(rtp.SatisfactionBands) {
			r.Key = rtp.SatisfactionBands[i].Label
		}
		c.add(r)
	}
}

// rank computes each row's change and movement, ranks the rows whose
// populations reach minPop on both sides, and orders the list.
func (c *Comparison) rank(minPop int) {
	for i := range c.Rows {
		r := &c.Rows[i]
		if r.Before == nil || r.After == nil {
			continue
		}
		d := *r.After - *r.Before
		r.Change = &d
		if *r.Before != 0 {
			p := d / math.Abs(*r.Before) * 100
			r.ChangePct = &p
		}
		if den := math.Max(math.Abs(*r.Before), math.Abs(*r.After)); den > 0 {
			r.Movement = math.Abs(d) / den
		}
		if r.PopBefore < minPop || r.PopAfter < minPop {
			r.Note = fmt.Sprintf("too few: %d %s before, %d after (min_population %d)", r.PopBefore, r.PopUnit, r.PopAfter, minPop)
			continue
		}
		r.Rank = -1 // ranked below
	}
	ranked := func(r Row) bool { return r.Rank != 0 }
	slices.SortStableFunc(c.Rows, func(x, y Row) int {
		switch {
		case ranked(x) != ranked(y):
			if ranked(x) {
				return -1
			}
			return 1
		case ranked(x):
			if m := cmp.Or(cmp.Compare(y.Movement, x.Movement), cmp.Compare(math.Abs(*y.Change), math.Abs(*x.Change))); m != 0 {
				return m
			}
		}
		return cmp.Compare(slices.Index(familyOrder, x.Family), slices.Index(familyOrder, y.Family))
	})
	for i := range c.Rows {
		if c.Rows[i].Rank != 0 {
			c.Rows[i].Rank = i + 1
		}
	}
}
