package sip

import (
	"cmp"
	"slices"
	"sync"
	"time"
)

// TextDimension reports whether dim's values are sender text (a
// User-Agent, which the sender wrote freely) rather than the box's own
// vocabulary (methods, states, codes, transports) or identifiers (URI
// users, addresses): an answer fences the former and leaves the rest
// bare. NoValue is the box's own word in every dimension.
func TextDimension(dim string) bool { return dim == "user_agent" }

// Bucket is the dialogs sharing one value of a dimension.
type Bucket struct {
	Value string // NoValue when the dialog has none
	Count int
}

// Aggregation counts the dialogs a filter matched by one dimension. In a
// single-valued dimension every matched dialog is in exactly one bucket,
// so the kept buckets' counts plus OtherCount equal TotalMatched; in a
// MultiDimension (Multi) a dialog counts in each of its participants'
// buckets and the counts add up to more.
type Aggregation struct {
	Multi        bool
	Buckets      []Bucket // largest first, ties by value; at most the bound asked for
	OtherBuckets int      // buckets past the bound
	OtherCount   int      // dialogs in them
	TotalMatched int
}

// CountStates counts ds (a snapshot's dialogs) by state; empty, never
// nil, without a dialog.
func CountStates(ds []*Dialog) map[string]int {
	n := map[string]int{}
	for _, d := range ds {
		n[d.State]++
	}
	return n
}

// Aggregate counts ds (a snapshot's dialogs) that match accepts (every
// one when match is nil) by dim, keeping the maxBuckets largest buckets.
// dim must be one of Dimensions.
func Aggregate(ds []*Dialog, match func(*Dialog) bool, dim string, maxBuckets int) Aggregation {
	k := newKeyer(dim)
	var counts []int // by key id
	out := Aggregation{Multi: MultiDimension(dim)}
	for i, d := range ds {
		if i%warmBlock == 0 {
			block := ds[i:min(i+warmBlock, len(ds))]
			if match != nil {
				warm(block)
			}
			k.warm(block)
		}
		if match == nil || match(d) {
			for _, id := range k.keys(d) {
				if int(id) == len(counts) {
					counts = append(counts, 0)
				}
				counts[id]++
			}
			out.TotalMatched++
		}
	}
	out.Buckets = make([]Bucket, len(counts))
	for id, n := range counts {
		out.Buckets[id] = Bucket{Value: k.values[id], Count: n}
	}
	slices.SortFunc(out.Buckets, func(a, b Bucket) int { return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Value, b.Value)) })
	if len(out.Buckets) > maxBuckets {
		for _, b := range out.Buckets[maxBuckets:] {
			out.OtherCount += b.Count
		}
		out.OtherBuckets = len(out.Buckets) - maxBuckets
		out.Buckets = out.Buckets[:maxBuckets]
	}
	return out
}

// Group is the call figures of the dialogs sharing one value.
type Group struct {
	Value   string // NoValue when the dialog has none
	Metrics CallMetrics
}

// Grouping is the call figures per value of one dimension; in a
// MultiDimension (Multi) a dialog is measured in each of its
// participants' groups, and once in Other.
type Grouping struct {
	Multi  bool
	Groups []Group // largest first, ties by value; at most the bound asked for
	// Other measures the dialogs of the groups past the bound together;
	// nil when every group is kept.
	Other        *CallMetrics
	OtherGroups  int
	Overall      CallMetrics // every matched dialog
	TotalMatched int
}

// GroupMetrics computes the call figures of ds that match accepts (every
// one when match is nil), per value of dim, keeping the maxGroups
// largest groups and measuring the rest together. dim must be one of
// Dimensions. It reads the dialogs once, into a scratch (groupScratch),
// and measures the groups from there.
func GroupMetrics(ds []*Dialog, match func(*Dialog) bool, dim string, maxGroups int) Grouping {
	k := newKeyer(dim)
	out := Grouping{Multi: MultiDimension(dim)}
	sc := groupScratches.Get().(*groupScratch)
	sc.multi = out.Multi
	defer sc.release()
	var accs []MetricsAcc // by key id, counts only: the PDD samples are sc's
	var all MetricsAcc
	for i, d := range ds {
		if i%warmBlock == 0 {
			k.warmFor(ds[i:min(i+warmBlock, len(ds))], match != nil)
		}
		if match != nil && !match(d) {
			continue
		}
		f := sc.row(d)
		for _, id := range k.keys(d) {
			if int(id) == len(accs) {
				accs = append(accs, MetricsAcc{})
				sc.counts = append(sc.counts, 0)
			}
			accs[id].dialogs++
			accs[id].add(&f)
			sc.ids = append(sc.ids, id)
		}
		if sc.multi {
			sc.ends = append(sc.ends, int32(len(sc.ids)))
		}
		all.dialogs++
		all.add(&f)
	}
	out.TotalMatched = all.dialogs
	sc.group()
	ids := make([]int32, len(accs))
	for i := range ids {
		ids[i] = int32(i)
	}
	slices.SortFunc(ids, func(a, b int32) int {
		return cmp.Or(cmp.Compare(accs[b].dialogs, accs[a].dialogs), cmp.Compare(k.values[a], k.values[b]))
	})
	if len(ids) > maxGroups {
		// The dialogs with a key among the rest's, each measured once: in
		// a MultiDimension a dialog may have several.
		rest := make([]bool, len(accs))
		for _, id := range ids[maxGroups:] {
			rest[id] = true
		}
		other := sc.other(rest, accs)
		r := other.Result()
		out.Other, out.OtherGroups = &r, len(ids)-maxGroups
		ids = ids[:maxGroups]
	}
	out.Groups = make([]Group, 0, len(ids))
	for _, id := range ids {
		accs[id].pdd = sc.groupPDDs(id)
		out.Groups = append(out.Groups, Group{Value: k.values[id], Metrics: accs[id].Result()})
	}
	all.pdd = sc.allPDDs()
	out.Overall = all.Result()
	return out
}

// groupScratch is GroupMetrics' working memory, kept for the next call
// (groupScratches): each matched dialog (a row) with its keys and its
// PDD samples, then the samples again by group. At 100,000 dialogs it is
// megabytes (36 bytes a dialog in a single-valued dimension, 76 in a
// MultiDimension of two keys a dialog), and allocated on every call on
// a heap of hundreds of megabytes it brought the collector round often
// enough to cost more CPU than the call itself (docs/benchmarks.md). In
// a MultiDimension a row's keys vary in number and the rest past the
// bound is measured from the rows' shares; otherwise a row is its one
// key and the rest is the sum of its groups.
type groupScratch struct {
	multi   bool
	rows    []rowShare // the rows' shares (multi)
	ids     []int32    // the rows' keys' ids, back to back
	ends    []int32    // row i's ids end at ends[i], and start at ends[i-1] (multi)
	samples []rowPDD   // every PDD sample (ms), by row
	counts  []int32    // by key id: its samples, then where they start in pdds
	pdds    []float64  // the samples by key id, back to back, then spare room
}

type rowPDD struct {
	row int32
	pdd float64
}

// rowShare is a row's figures (counts only) in 24 bytes: a dialog's
// attempts are bounded by its transactions.
type rowShare struct {
	attempts, answered, network, durN int32
	durSum                            time.Duration
}

var groupScratches = sync.Pool{New: func() any { return new(groupScratch) }}

// row adds d as the next row (its keys follow), its PDD samples with
// it, and returns its share (counts only).
func (sc *groupScratch) row(d *Dialog) figures {
	r := int32(len(sc.ids))
	if sc.multi {
		r = int32(len(sc.ends))
	}
	f, ok := d.memoFigures()
	if ok {
		if f.hasPDD {
			sc.samples = append(sc.samples, rowPDD{r, f.pdd})
		}
	} else {
		var acc MetricsAcc // the attempts' counts, added up as Add does
		for _, at := range d.Attempts() {
			var af figures
			if p, ok := af.fold(&at); ok {
				sc.samples = append(sc.samples, rowPDD{r, p})
			}
			acc.add(&af)
		}
		f = acc.counts()
	}
	if sc.multi {
		sc.rows = append(sc.rows, rowShare{int32(f.attempts), int32(f.answered), int32(f.network), int32(f.durN), f.durSum})
	}
	return f
}

// keysOf are row r's key ids.
func (sc *groupScratch) keysOf(r int32) []int32 {
	if !sc.multi {
		return sc.ids[r : r+1]
	}
	start := int32(0)
	if r > 0 {
		start = sc.ends[r-1]
	}
	return sc.ids[start:sc.ends[r]]
}

// group lays the samples out by key id in pdds, counts[id] of them from
// the offset the ids before it fill; counts then holds those offsets.
func (sc *groupScratch) group() {
	for _, s := range sc.samples {
		for _, id := range sc.keysOf(s.row) {
			sc.counts[id]++
		}
	}
	total := int32(0)
	for id, n := range sc.counts {
		sc.counts[id] = total
		total += n
	}
	// Room after the groups' for the other and the overall samples.
	sc.pdds = slices.Grow(sc.pdds[:0], int(total)+len(sc.samples))[:total]
	next := slices.Clone(sc.counts) // one per key
	for _, s := range sc.samples {
		for _, id := range sc.keysOf(s.row) {
			sc.pdds[next[id]] = s.pdd
			next[id]++
		}
	}
}

// groupPDDs are key id's samples (which the percentiles reorder).
func (sc *groupScratch) groupPDDs(id int32) []float64 {
	end := int32(len(sc.pdds))
	if int(id)+1 < len(sc.counts) {
		end = sc.counts[id+1]
	}
	return sc.pdds[sc.counts[id]:end]
}

// allPDDs are every sample once, in pdds' room after the groups'.
func (sc *groupScratch) allPDDs() []float64 {
	n := len(sc.pdds)
	out := sc.pdds[n : n+len(sc.samples)]
	for i, s := range sc.samples {
		out[i] = s.pdd
	}
	return out
}

// other measures the rows with a key whose rest is true, each once: in
// a MultiDimension from their shares, else as the sum of the rest's
// groups (accs). Its samples go in pdds' room after the groups', which
// allPDDs reuses: measure it first.
func (sc *groupScratch) other(rest []bool, accs []MetricsAcc) MetricsAcc {
	var o MetricsAcc
	in := func(r int32) bool { return slices.ContainsFunc(sc.keysOf(r), func(id int32) bool { return rest[id] }) }
	if sc.multi {
		for r, sh := range sc.rows {
			if in(int32(r)) {
				o.dialogs++
				o.add(&figures{attempts: int(sh.attempts), answered: int(sh.answered), network: int(sh.network), durN: int(sh.durN), durSum: sh.durSum})
			}
		}
	} else {
		for id := range accs {
			if rest[id] {
				o.addCounts(&accs[id])
			}
		}
	}
	n := len(sc.pdds)
	o.pdd = sc.pdds[n:n]
	for _, s := range sc.samples {
		if in(s.row) {
			o.pdd = append(o.pdd, s.pdd) // in the room: at most every sample
		}
	}
	return o
}

// release empties sc and gives it back for the next call.
func (sc *groupScratch) release() {
	sc.rows, sc.ids, sc.ends, sc.samples, sc.counts, sc.pdds = sc.rows[:0], sc.ids[:0], sc.ends[:0], sc.samples[:0], sc.counts[:0], sc.pdds[:0]
	groupScratches.Put(sc)
}

// warmFor warms a block of dialogs for GroupMetrics: what a filter
// reads when there is one, what the dimension's keys read, the memo
// words.
func (k *keyer) warmFor(block []*Dialog, filtered bool) {
	if filtered {
		warm(block)
	}
	k.warm(block)
	warmMemos(block)
}
