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

// Aggregate counts ds (a snapshot's dialogs) that match accepts (every
// one when match is nil) by dim, keeping the maxBuckets largest buckets.
// dim must be one of Dimensions.
func Aggregate(ds []*Dialog, match func(*Dialog) bool, dim string, maxBuckets int) Aggregation {
	k := newKeyer(dim)
	var counts []int // by key id
	matched := 0
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
			matched++
		}
	}
	return bucketsOf(counts, k.values, MultiDimension(dim), matched, maxBuckets)
}

// bucketsOf is the Aggregation of counts by key id (values are the
// keys'), keeping the maxBuckets largest; a key without a dialog is no
// bucket.
func bucketsOf(counts []int, values []string, multi bool, matched, maxBuckets int) Aggregation {
	out := Aggregation{Multi: multi, TotalMatched: matched, Buckets: make([]Bucket, 0, len(counts))}
	for id, n := range counts {
		if n > 0 {
			out.Buckets = append(out.Buckets, Bucket{Value: values[id], Count: n})
		}
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
	sc := groupScratches.Get().(*groupScratch)
	defer sc.release()
	rows := &sc.rows
	rows.multi = MultiDimension(dim)
	for i, d := range ds {
		if i%warmBlock == 0 {
			k.warmFor(ds[i:min(i+warmBlock, len(ds))], match != nil)
		}
		if match == nil || match(d) {
			rows.add(d, k.keys(d))
		}
	}
	return sc.measure(rows, k.values, maxGroups)
}

// groupRows are the dialogs GroupMetrics measures, one row each: its
// share of the figures (counts only), its keys' ids and its PDD samples.
// A row's keys are ids[r] in a single-valued dimension; in a
// MultiDimension they vary in number and end at ends[r], starting at
// ends[r-1].
type groupRows struct {
	multi   bool
	shares  []rowShare
	ids     []int32
	ends    []int32  // multi only
	samples []rowPDD // by row
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

func (sh *rowShare) figures() figures {
	return figures{attempts: int(sh.attempts), answered: int(sh.answered), network: int(sh.network), durN: int(sh.durN), durSum: sh.durSum}
}

// add adds d as the next row, with keys.
func (g *groupRows) add(d *Dialog, keys []int32) {
	g.addFigures(d)
	g.ids = append(g.ids, keys...)
	if g.multi {
		g.ends = append(g.ends, int32(len(g.ids)))
	}
}

// addFigures adds d's share and PDD samples as the next row, without
// keys (a figures column: siteColumns).
func (g *groupRows) addFigures(d *Dialog) {
	r := int32(len(g.shares))
	f, ok := d.memoFigures()
	if ok {
		if f.hasPDD {
			g.samples = append(g.samples, rowPDD{r, f.pdd})
		}
	} else {
		var acc MetricsAcc // the attempts' counts, added up as Add does
		for _, at := range d.Attempts() {
			var af figures
			if p, ok := af.fold(&at); ok {
				g.samples = append(g.samples, rowPDD{r, p})
			}
			acc.add(&af)
		}
		f = acc.counts()
	}
	g.shares = append(g.shares, rowShare{int32(f.attempts), int32(f.answered), int32(f.network), int32(f.durN), f.durSum})
}

// keysOf are row r's key ids.
func (g *groupRows) keysOf(r int32) []int32 {
	if !g.multi {
		return g.ids[r : r+1]
	}
	return g.ids[g.start(r):g.ends[r]]
}

// start is where row r's keys start in ids, in a MultiDimension.
func (g *groupRows) start(r int32) int32 {
	if r == 0 {
		return 0
	}
	return g.ends[r-1]
}

// addRow adds row r of from (a snapshot's columns) as the next row.
// from's samples are by row: next is where row r's start, and addRow
// returns where the next row's do.
func (g *groupRows) addRow(from *groupRows, r int32, next int) int {
	row := int32(len(g.shares))
	g.shares = append(g.shares, from.shares[r])
	g.ids = append(g.ids, from.keysOf(r)...)
	if g.multi {
		g.ends = append(g.ends, int32(len(g.ids)))
	}
	for ; next < len(from.samples) && from.samples[next].row <= r; next++ {
		if from.samples[next].row == r {
			g.samples = append(g.samples, rowPDD{row, from.samples[next].pdd})
		}
	}
	return next
}

// groupScratch is GroupMetrics' working memory, kept for the next call
// (groupScratches): the matched rows, then their PDD samples by group.
// At 100,000 dialogs it is megabytes (60 bytes a dialog in a
// single-valued dimension, 76 in a MultiDimension of two keys a
// dialog), and allocated on every call on a heap of hundreds of
// megabytes it brought the collector round often enough to cost more
// CPU than the call itself (docs/benchmarks.md).
type groupScratch struct {
	rows   groupRows
	counts []int32   // by key id: its samples, then where they start in pdds
	pdds   []float64 // the samples by key id, back to back, then spare room
}

var groupScratches = sync.Pool{New: func() any { return new(groupScratch) }}

// measure is the Grouping of rows (sc's own or a snapshot's columns),
// whose keys' ids index values.
func (sc *groupScratch) measure(rows *groupRows, values []string, maxGroups int) Grouping {
	accs, all := groupsOf(rows, len(values))
	sc.group(rows, len(values), true)
	for id := range accs {
		accs[id].pdd = sc.groupPDDs(int32(id))
	}
	return sc.rank(rows, accs, all, values, maxGroups)
}

// groupsOf counts rows by key id (accs, without the PDD samples) and
// together (all).
func groupsOf(rows *groupRows, keys int) (accs []MetricsAcc, all MetricsAcc) {
	accs = make([]MetricsAcc, keys)
	for r := range rows.shares {
		f := rows.shares[r].figures()
		for _, id := range rows.keysOf(int32(r)) {
			accs[id].dialogs++
			accs[id].add(&f)
		}
		all.add(&f)
	}
	all.dialogs = len(rows.shares)
	return accs, all
}

// rank is the Grouping of rows from their groups (accs, by key id, with
// their samples; a snapshot's groupIndex's are only read): the
// maxGroups largest, the rest measured together, and all, whose samples
// are every row's when it has none. sc.pdds has room past its length for
// every sample of rows.
func (sc *groupScratch) rank(rows *groupRows, accs []MetricsAcc, all MetricsAcc, values []string, maxGroups int) Grouping {
	out := Grouping{Multi: rows.multi, TotalMatched: all.dialogs}
	ids := make([]int32, 0, len(accs))
	for id := range accs {
		if accs[id].dialogs > 0 { // a column's key the filter left without a dialog
			ids = append(ids, int32(id))
		}
	}
	slices.SortFunc(ids, func(a, b int32) int {
		return cmp.Or(cmp.Compare(accs[b].dialogs, accs[a].dialogs), cmp.Compare(values[a], values[b]))
	})
	if len(ids) > maxGroups {
		// The dialogs with a key among the rest's, each measured once: in
		// a MultiDimension a dialog may have several.
		rest := make([]bool, len(accs))
		for _, id := range ids[maxGroups:] {
			rest[id] = true
		}
		other := sc.other(rows, rest, accs, &all)
		r := other.Result()
		out.Other, out.OtherGroups = &r, len(ids)-maxGroups
		ids = ids[:maxGroups]
	}
	out.Groups = make([]Group, 0, len(ids))
	for _, id := range ids {
		out.Groups = append(out.Groups, Group{Value: values[id], Metrics: accs[id].Result()})
	}
	if all.pdd == nil {
		all.pdd = sc.allPDDs(rows) // after other, whose room it reuses
	}
	out.Overall = all.Result()
	return out
}

// group lays rows' samples out by key id in pdds, counts[id] of them
// from the offset the ids before it fill; counts then holds those
// offsets. With room, pdds has room past them for every sample of rows
// (other's and allPDDs').
func (sc *groupScratch) group(rows *groupRows, keys int, room bool) {
	sc.counts = slices.Grow(sc.counts[:0], keys)[:keys]
	clear(sc.counts)
	for _, s := range rows.samples {
		for _, id := range rows.keysOf(s.row) {
			sc.counts[id]++
		}
	}
	total := int32(0)
	for id, n := range sc.counts {
		sc.counts[id] = total
		total += n
	}
	n := int(total)
	if room {
		n += len(rows.samples)
	}
	sc.pdds = slices.Grow(sc.pdds[:0], n)[:total]
	next := slices.Clone(sc.counts) // one per key
	for _, s := range rows.samples {
		for _, id := range rows.keysOf(s.row) {
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

// allPDDs are every sample of rows once, in pdds' room after the groups'.
func (sc *groupScratch) allPDDs(rows *groupRows) []float64 {
	n := len(sc.pdds)
	out := sc.pdds[n : n+len(rows.samples)]
	for i, s := range rows.samples {
		out[i] = s.pdd
	}
	return out
}

// other measures the rows with a key whose rest is true, each once: in
// a MultiDimension from their shares, else as the sum of the rest's
// groups (accs). Its samples go in pdds' room after the groups', which
// allPDDs reuses: measure it first.
func (sc *groupScratch) other(rows *groupRows, rest []bool, accs []MetricsAcc, all *MetricsAcc) MetricsAcc {
	var o MetricsAcc
	in := func(r int32) bool {
		return slices.ContainsFunc(rows.keysOf(r), func(id int32) bool { return rest[id] })
	}
	if rows.multi {
		for r := range rows.shares {
			if in(int32(r)) {
				o.dialogs++
				f := rows.shares[r].figures()
				o.add(&f)
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
	var out []keyedPDD // the samples not the rest's, when every sample is sorted
	collect := func() {
		o.pdd, out = sc.pdds[n:n], out[:0]
		for _, s := range rows.samples {
			if in(s.row) {
				o.pdd = append(o.pdd, s.pdd) // in the room: at most every sample
			} else if all.sorted {
				out = append(out, keyedPDD{pdd: s.pdd})
			}
		}
	}
	collect()
	if all.sorted && len(out) < len(o.pdd) {
		// Most samples are the rest's (a participant past the bound is in
		// most calls with the busiest): every sample sorted, less the
		// others', is theirs sorted, a copy instead of a selection.
		slices.SortFunc(out, func(a, b keyedPDD) int { return cmp.Compare(a.pdd, b.pdd) })
		if p, ok := merged(o.pdd, all.pdd, out, nil); ok {
			o.pdd, o.sorted = p, true
		} else {
			collect() // not every sample's: selected, as without
		}
	}
	return o
}

// release empties sc and gives it back for the next call.
func (sc *groupScratch) release() {
	g := &sc.rows
	g.shares, g.ids, g.ends, g.samples = g.shares[:0], g.ids[:0], g.ends[:0], g.samples[:0]
	sc.counts, sc.pdds = sc.counts[:0], sc.pdds[:0]
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
