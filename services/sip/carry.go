package sip

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"fieldtap/services/filter"
)

// carrier keeps, across a store's snapshots, the newest site columns
// (siteColumns): each dimension's key column with the keyer that
// numbered it and its sorted groups, the figure rows, every sample
// sorted, the problem column, the filter columns (columns) and the rows
// the last filters matched (matchRows), and the columns other packages
// derive (RowColumn). A live store gives every call a new
// snapshot, which builds its columns from these: a dialog unchanged since
// is a row copied (in runs), and only the dialogs changed or added since
// are read; the sorted groups take out the samples of the rows gone and
// merge in those of the rows come. At 100,000 dialogs reading every
// dialog was most of a site-wide call's cost (docs/benchmarks.md). It
// holds no dialog: which rows are still the same dialogs is told by the
// ring's sequence numbers and the epochs (Snapshot.same).
//
// What it keeps is the newest snapshot's columns, each built within that
// snapshot's share (siteColumns), at most one of each; a keyer whose
// values outgrow twice the dialogs (keys of evicted dialogs) is not
// carried on, and the next column is built afresh.
type carrier struct {
	used atomic.Bool // a column was kept: snapshots take their dialogs' ages
	mu   sync.Mutex
	keys map[int]*carriedKeys // by dimension index
	figs *carriedFigs
	// sorted are the newest sorted samples (Snapshot.sortedSamples), with
	// the figure rows they are of.
	sorted   *carriedFigs
	problems *carriedProblems
	filters  *carriedColumns
	// matches are the newest rows matched by the last few filters
	// (Snapshot.matchRows), oldest first.
	matches []*carriedMatch
	// rowCols are the newest RowColumn of a few keys, oldest first.
	rowCols []*carriedRowColumn
}

// carriedMatches is how many filters' matched rows the carrier keeps: a
// few agents each polling with its own filter.
const carriedMatches = 4

// carriedMatch is the rows a filter (its text: the schema is the
// dialogs') matched among a snapshot's filter columns, a bit a row.
type carriedMatch struct {
	rows rowsOf
	src  string
	in   []uint64
}

type carriedColumns struct {
	rows rowsOf
	cols *columns
}

type carriedProblems struct {
	rows rowsOf
	sets []uint32
}

// rowsOf says which dialogs a snapshot's rows are: the ring sequence
// number of the first, the snapshot's epoch and how many.
type rowsOf struct {
	first, epoch uint64
	n            int
}

type carriedKeys struct {
	rows      rowsOf
	multi     bool
	ids, ends []int32
	k         *keyer        // nil while a snapshot carries it on
	ix        *carriedIndex // once built (keyColumn.index)
}

type carriedFigs struct {
	rows   rowsOf
	figs   *groupRows // shares and samples
	sorted []float64  // every sample sorted (in carrier.sorted only)
}

// locked runs f on the store's carrier under its lock; nothing for a
// snapshot without one (not a store's).
func (sn *Snapshot) locked(f func(cr *carrier)) {
	if cr := sn.carry; cr != nil {
		cr.mu.Lock()
		defer cr.mu.Unlock()
		f(cr)
	}
}

// same returns the row of from's snapshot that is row i of sn, when it
// is the same dialog: one allocated before from was taken (the store
// copies a dialog it changes after a snapshot, in a new epoch).
func (sn *Snapshot) same(from rowsOf, i int) (int, bool) {
	seq := sn.rows.first + uint64(i)
	if seq < from.first || seq-from.first >= uint64(from.n) {
		return 0, false
	}
	return int(seq - from.first), uint64(sn.ages[i]) > sn.rows.epoch-from.epoch
}

// carries reports whether sn can carry from a snapshot of from's rows.
func (sn *Snapshot) carries(from rowsOf) bool {
	return sn.ages != nil && from.first <= sn.rows.first && from.epoch < sn.rows.epoch && sn.rows.epoch-from.epoch < math.MaxUint32
}

// carryKeys builds kc, the key column of dimension dim (its index in
// Dimensions), from the carried one, and returns the keyer that numbers
// it; nil when there is none sn can carry from, or its keyer is in use
// or outgrown.
func (sn *Snapshot) carryKeys(kc *keyColumn, dim int) *keyer {
	var c *carriedKeys
	var k *keyer
	sn.locked(func(cr *carrier) {
		c = cr.keys[dim]
		if c != nil && c.k != nil && sn.carries(c.rows) && len(c.k.values) <= 2*len(sn.Dialogs)+64 {
			k, c.k = c.k, nil
		}
	})
	if k == nil {
		return nil
	}
	from := groupRows{multi: c.multi, ids: c.ids, ends: c.ends}
	kc.multi = from.multi
	kc.ids = make([]int32, 0, len(from.ids)+len(sn.Dialogs)-c.rows.n)
	if kc.multi {
		kc.ends = make([]int32, 0, len(sn.Dialogs))
	}
	shift := int(sn.rows.first - c.rows.first)
	for i := 0; i < len(sn.Dialogs); {
		if n := sn.sameRun(c.rows, i); n > 0 { // rows j to j+n of from, in one copy
			j := i + shift
			start, end := j, j+n
			if kc.multi {
				start, end = int(from.start(int32(j))), int(from.ends[j+n-1])
				for _, e := range from.ends[j : j+n] {
					kc.ends = append(kc.ends, e-int32(start)+int32(len(kc.ids)))
				}
			}
			kc.ids = append(kc.ids, from.ids[start:end]...)
			i += n
			continue
		}
		kc.ids = append(kc.ids, k.keys(sn.Dialogs[i])...)
		if kc.multi {
			kc.ends = append(kc.ends, int32(len(kc.ids)))
		}
		i++
	}
	kc.values, kc.from = k.values, c
	return k
}

// keepKeys offers kc, sn's column of dimension dim numbered by k, to the
// snapshots after sn.
func (sn *Snapshot) keepKeys(dim int, kc *keyColumn, k *keyer) {
	sn.locked(func(cr *carrier) {
		if cr.keys == nil {
			cr.keys = map[int]*carriedKeys{}
		}
		if c := cr.keys[dim]; c == nil || c.rows.epoch <= sn.rows.epoch {
			cr.keys[dim] = &carriedKeys{rows: sn.rows, multi: kc.multi, ids: kc.ids, ends: kc.ends, k: k}
			cr.used.Store(true)
		}
	})
}

// carryFigures fills rows (shares and samples) from the carried figure
// rows; false when there are none sn can carry from.
func (sn *Snapshot) carryFigures(rows *groupRows) bool {
	var c *carriedFigs
	sn.locked(func(cr *carrier) { c = cr.figs })
	if c == nil || !sn.carries(c.rows) {
		return false
	}
	from := c.figs
	rows.shares = make([]rowShare, 0, len(sn.Dialogs))
	rows.samples = make([]rowPDD, 0, max(len(from.samples)+len(sn.Dialogs)-c.rows.n, 0)) // the store may hold fewer dialogs now
	shift := int(sn.rows.first - c.rows.first)
	for i := 0; i < len(sn.Dialogs); {
		if n := sn.sameRun(c.rows, i); n > 0 { // rows j to j+n of from, in one copy
			j := i + shift
			rows.shares = append(rows.shares, from.shares[j:j+n]...)
			ss := from.samples[sortSearch(from.samples, int32(j)):]
			for _, s := range ss[:sortSearch(ss, int32(j+n))] {
				rows.samples = append(rows.samples, rowPDD{s.row - int32(shift), s.pdd})
			}
			i += n
			continue
		}
		rows.addFigures(sn.Dialogs[i])
		i++
	}
	return true
}

// sameRun is how many of sn's rows from row i on are, in turn, the same
// dialogs as rows of from's snapshot (same).
func (sn *Snapshot) sameRun(from rowsOf, i int) int {
	n := 0
	for ; i+n < len(sn.Dialogs); n++ {
		if _, ok := sn.same(from, i+n); !ok {
			break
		}
	}
	return n
}

// keepFigures offers rows, sn's figure rows, to the snapshots after sn
// (a copy of their slices: the carrier holds nothing of the snapshot).
func (sn *Snapshot) keepFigures(rows groupRows) {
	sn.locked(func(cr *carrier) {
		if cr.figs == nil || cr.figs.rows.epoch <= sn.rows.epoch {
			cr.figs = &carriedFigs{rows: sn.rows, figs: &groupRows{shares: rows.shares, samples: rows.samples}}
			cr.used.Store(true)
		}
	})
}

// carriedIndex is a kept key column's index (keyColumn.index) with the
// figure rows it counts.
type carriedIndex struct {
	accs []MetricsAcc
	all  MetricsAcc
	figs *groupRows
}

// changes are the rows of from's snapshot gone since (evicted, or their
// dialog changed) and the rows of sn come since (new, or changed), each
// in order.
func (sn *Snapshot) changes(from rowsOf) (gone, come []int32) {
	shift := int(sn.rows.first - from.first)
	for j := range min(shift, from.n) {
		gone = append(gone, int32(j))
	}
	for i := range sn.Dialogs {
		if _, ok := sn.same(from, i); ok {
			continue
		}
		if j := i + shift; j < from.n {
			gone = append(gone, int32(j))
		}
		come = append(come, int32(i))
	}
	return gone, come
}

// keyedPDD is a sample of the group with key id.
type keyedPDD struct {
	id  int32
	pdd float64
}

// countRows adds sign (1 or -1) times the figures of rows rs (in order) of
// figs, keyed by keys (nil: every row key 0), to accs and all, and
// returns their samples, one for each key of a row, sorted by key and
// value.
func countRows(keys, figs *groupRows, rs []int32, accs []MetricsAcc, all *MetricsAcc, sign int) []keyedPDD {
	var out []keyedPDD
	next := 0 // figs' first sample of a row not yet passed
	for _, r := range rs {
		f := figs.shares[r].figures()
		if sign < 0 {
			f.attempts, f.answered, f.network, f.durN, f.durSum = -f.attempts, -f.answered, -f.network, -f.durN, -f.durSum
		}
		ids := []int32{0}
		if keys != nil {
			ids = keys.keysOf(r)
		}
		for _, id := range ids {
			accs[id].dialogs += sign
			accs[id].add(&f)
		}
		all.dialogs += sign
		all.add(&f)
		next += sortSearch(figs.samples[next:], r)
		for ; next < len(figs.samples) && figs.samples[next].row == r; next++ {
			for _, id := range ids {
				out = append(out, keyedPDD{id, figs.samples[next].pdd})
			}
		}
	}
	slices.SortFunc(out, func(a, b keyedPDD) int { return cmp.Or(cmp.Compare(a.id, b.id), cmp.Compare(a.pdd, b.pdd)) })
	return out
}

// sortSearch is the index of the first of samples (by row) of row r or
// after.
func sortSearch(samples []rowPDD, r int32) int {
	i, _ := slices.BinarySearchFunc(samples, r, func(s rowPDD, r int32) int { return cmp.Compare(s.row, r) })
	return i
}

// merged is sorted less gone plus come (both sorted; gone's values are
// among sorted's), appended to dst[:0] (nil: a new slice); false when a
// value of gone is not.
func merged(dst, sorted []float64, gone, come []keyedPDD) ([]float64, bool) {
	out := dst[:0]
	if dst == nil {
		out = make([]float64, 0, max(len(sorted)-len(gone), 0)+len(come))
	}
	for _, v := range sorted {
		for len(come) > 0 && come[0].pdd < v {
			out, come = append(out, come[0].pdd), come[1:]
		}
		if len(gone) > 0 && gone[0].pdd == v {
			gone = gone[1:]
			continue
		}
		out = append(out, v)
	}
	for _, c := range come {
		out = append(out, c.pdd)
	}
	return out, len(gone) == 0
}

// runOf splits the leading samples of key id off ks.
func runOf(ks []keyedPDD, id int32) (run, rest []keyedPDD) {
	n := 0
	for n < len(ks) && ks[n].id == id {
		n++
	}
	return ks[:n], ks[n:]
}

// carryIndex builds the index of kc (carried from the kept column c) over
// rows, sn's figure rows, from c's index: the groups of the rows gone
// since taken out, those of the rows come added, and only the groups
// they touch given new sorted samples. False when c has no index.
func (sn *Snapshot) carryIndex(kc *keyColumn, c *carriedKeys, rows *groupRows) (accs []MetricsAcc, all MetricsAcc, ok bool) {
	sn.carry.mu.Lock()
	ix := c.ix
	sn.carry.mu.Unlock()
	if ix == nil {
		return nil, MetricsAcc{}, false
	}
	gone, come := sn.changes(c.rows)
	accs = make([]MetricsAcc, len(kc.values))
	copy(accs, ix.accs)
	all = ix.all
	old := groupRows{multi: c.multi, ids: c.ids, ends: c.ends}
	out := countRows(&old, ix.figs, gone, accs, &all, -1)
	in := countRows(&groupRows{multi: kc.multi, ids: kc.ids, ends: kc.ends}, rows, come, accs, &all, 1)
	for len(out) > 0 || len(in) > 0 {
		id := int32(math.MaxInt32)
		if len(out) > 0 {
			id = out[0].id
		}
		if len(in) > 0 {
			id = min(id, in[0].id)
		}
		var o, i []keyedPDD
		o, out = runOf(out, id)
		i, in = runOf(in, id)
		if accs[id].pdd, ok = merged(nil, accs[id].pdd, o, i); !ok {
			return nil, MetricsAcc{}, false
		}
	}
	for id := range accs {
		accs[id].sorted = true
	}
	return accs, all, true
}

// keepIndex offers kc's index, over rows, with the kept column it is of.
func (sn *Snapshot) keepIndex(dim int, accs []MetricsAcc, all MetricsAcc, rows *groupRows) {
	sn.locked(func(cr *carrier) {
		if c := cr.keys[dim]; c != nil && c.rows == sn.rows {
			c.ix = &carriedIndex{accs: accs, all: all, figs: &groupRows{shares: rows.shares, samples: rows.samples}}
		}
	})
}

// carrySorted is every sample of rows (sn's figure rows) sorted, from
// the kept figure rows' sorted samples; false without them.
func (sn *Snapshot) carrySorted(rows *groupRows) ([]float64, bool) {
	var c *carriedFigs
	sn.locked(func(cr *carrier) { c = cr.sorted })
	if c == nil || !sn.carries(c.rows) {
		return nil, false
	}
	gone, come := sn.changes(c.rows)
	var one [1]MetricsAcc // counts not wanted: every sample is key 0's
	out := countRows(nil, c.figs, gone, one[:], &one[0], -1)
	in := countRows(nil, rows, come, one[:], &one[0], 1)
	return merged(nil, c.sorted, out, in)
}

// keepSorted offers sorted, every sample of rows (sn's figure rows)
// sorted, to the snapshots after sn.
func (sn *Snapshot) keepSorted(rows *groupRows, sorted []float64) {
	sn.locked(func(cr *carrier) {
		if cr.sorted == nil || cr.sorted.rows.epoch <= sn.rows.epoch {
			cr.sorted = &carriedFigs{rows: sn.rows, figs: &groupRows{shares: rows.shares, samples: rows.samples}, sorted: sorted}
		}
	})
}

// carryProblems fills pc from the kept problem column; false when there
// is none sn can carry from.
func (sn *Snapshot) carryProblems(pc *problemColumn) bool {
	var c *carriedProblems
	sn.locked(func(cr *carrier) { c = cr.problems })
	if c == nil || !sn.carries(c.rows) {
		return false
	}
	ds := sn.Dialogs
	pc.sets = make([]uint32, 0, len(ds))
	shift := int(sn.rows.first - c.rows.first)
	for i := 0; i < len(ds); {
		if n := sn.sameRun(c.rows, i); n > 0 {
			j := i + shift
			pc.sets = append(pc.sets, c.sets[j:j+n]...)
			i += n
			continue
		}
		pc.sets = append(pc.sets, problemSet(ds[i]))
		i++
	}
	return true
}

// keepProblems offers pc, sn's problem column, to the snapshots after sn.
func (sn *Snapshot) keepProblems(pc *problemColumn) {
	sn.locked(func(cr *carrier) {
		if cr.problems == nil || cr.problems.rows.epoch <= sn.rows.epoch {
			cr.problems = &carriedProblems{rows: sn.rows, sets: pc.sets}
			cr.used.Store(true)
		}
	})
}

// carryColumns builds sn's filter columns from the kept ones, or returns
// nil when there are none sn can carry from (or the users outgrow the
// rows' 32-bit offsets).
func (sn *Snapshot) carryColumns() *columns {
	var c *carriedColumns
	sn.locked(func(cr *carrier) { c = cr.filters })
	if c == nil || !sn.carries(c.rows) {
		return nil
	}
	from, ds := c.cols, sn.Dialogs
	var users strings.Builder // its String does not copy
	users.Grow(len(from.users))
	rows := make([]colRow, 0, len(ds))
	shift := int(sn.rows.first - c.rows.first)
	for i := 0; i < len(ds); {
		if n := sn.sameRun(c.rows, i); n > 0 { // rows j to j+n of from, their users in one copy
			j := i + shift
			start := uint32(0)
			if j > 0 {
				start = from.rows[j-1].toEnd
			}
			at := int64(users.Len()) - int64(start)
			users.WriteString(from.users[start:from.rows[j+n-1].toEnd])
			for _, r := range from.rows[j : j+n] {
				r.fromEnd, r.toEnd = uint32(int64(r.fromEnd)+at), uint32(int64(r.toEnd)+at)
				rows = append(rows, r)
			}
			i += n
		} else {
			rows = append(rows, addRow(&users, ds[i]))
			i++
		}
		if uint64(users.Len()) > math.MaxUint32 { // uint64: the bound passes a 32-bit int
			return nil
		}
	}
	return &columns{rows: rows, users: users.String()}
}

// keepColumns offers cols, sn's filter columns, to the snapshots after
// sn.
func (sn *Snapshot) keepColumns(cols *columns) {
	sn.locked(func(cr *carrier) {
		if cr.filters == nil || cr.filters.rows.epoch <= sn.rows.epoch {
			cr.filters = &carriedColumns{rows: sn.rows, cols: cols}
			cr.used.Store(true)
		}
	})
}

// matchRows returns the rows of c, sn's filter columns, that e matches,
// a bit a row (has). A row whose dialog is unchanged since the store's
// previous answer to the same filter matches as it did then (its columns
// are its dialog's), so a live store's call tests only the rows changed
// or added since. The set returned is not written after.
func (sn *Snapshot) matchRows(c *columns, e *filter.Expr) []uint64 {
	src := e.String()
	var from *carriedMatch
	sn.locked(func(cr *carrier) {
		for _, m := range cr.matches {
			if m.src == src {
				from = m
			}
		}
	})
	if from != nil && from.rows == sn.rows {
		return from.in // this snapshot's own answer, asked again
	}
	in := make([]uint64, (len(c.rows)+63)/64)
	if from == nil || !sn.carries(from.rows) {
		c.each(e, func(i int) { in[i/64] |= 1 << (i % 64) })
	} else {
		k := &colCursor{c: c}
		var rec filter.Record = k
		var sc filter.Scalars = k
		shift := int(sn.rows.first - from.rows.first)
		for i := 0; i < len(c.rows); {
			if n := sn.sameRun(from.rows, i); n > 0 {
				for r := i; r < i+n; r++ {
					if j := r + shift; from.in[j/64]&(1<<(j%64)) != 0 {
						in[r/64] |= 1 << (r % 64)
					}
				}
				i += n
				continue
			}
			k.at(i)
			if e.MatchScalars(rec, sc) {
				in[i/64] |= 1 << (i % 64)
			}
			i++
		}
	}
	sn.site.hold(8 * int64(len(in)))
	sn.keepMatch(src, in)
	return in
}

// keepMatch offers in, the rows filter src matched among sn's filter
// columns, to the snapshots after sn, in place of src's older rows or,
// past carriedMatches filters, of the least recently kept.
func (sn *Snapshot) keepMatch(src string, in []uint64) {
	sn.locked(func(cr *carrier) {
		kept := make([]*carriedMatch, 0, carriedMatches)
		for _, m := range cr.matches {
			if m.src != src {
				kept = append(kept, m)
			} else if m.rows.epoch > sn.rows.epoch {
				return // a newer snapshot's rows are kept already
			}
		}
		if len(kept) == carriedMatches {
			kept = kept[1:]
		}
		cr.matches = append(kept, &carriedMatch{rows: sn.rows, src: src, in: in})
		cr.used.Store(true)
	})
}
