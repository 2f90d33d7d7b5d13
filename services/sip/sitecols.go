package sip

import (
	"cmp"
	"math"
	"slices"
	"sync"
	"time"
	"unsafe"

	"fieldtap/services/filter"
)

// columnShare: a snapshot's columns may hold a quarter of what its
// dialogs may.
const columnShare = 4

// siteColumns are what a snapshot keeps for the site-wide answers
// (Snapshot.Aggregate, Snapshot.GroupMetrics, find_problems' Each) from
// their first ask: each asked dimension's keys of every dialog; every
// dialog's share of the call figures with its PDD samples, and each
// dimension's groups with their samples sorted; every dialog's problem
// set; every dialog's timeline marks (markColumn) and its failure's
// time (EachFailure's RowColumn), and on a second ask the failed dialogs
// by the time of their answer (failureColumn). An answer then reads them
// in sequence, a few bytes a dialog, instead of every dialog struct,
// which at 100,000 dialogs is a cache miss each and most of the call
// (docs/benchmarks.md). A loaded capture or a quiet line asks the same
// snapshot again; a live store gives each call a new snapshot, which
// carries the previous one's columns on and reads only the dialogs
// changed since (carry.go). The snapshot's dialogs do not change (the
// store copies a dialog it changes after a snapshot), so neither do they.
//
// They are answer memory, bounded by the snapshot's share: a column is
// built only while those built (the filter columns too) hold fewer than
// share bytes (the store's dialog bytes over columnShare), so at most
// share and the last one; past it the answers scan the dialogs.
type siteColumns struct {
	mu    sync.Mutex
	share int64          // bytes; 0 builds none
	bytes int64          // what the built columns hold
	asks  map[string]int // by answer and dimension: a group index is sorted on the second
	keys  map[string]*keyColumn
	figs  struct {
		once sync.Once
		rows groupRows // shares and samples, no keys
		// sorted are every row's samples sorted: the overall PDD of
		// every unfiltered group_dialogs.
		sortedOnce sync.Once
		sorted     []float64
	}
	problems problemColumn
	marks    markColumn
	failures failureColumn
}

// failureColumn is the rows of the snapshot's failed dialogs (a final
// code of 400 or more, with its time) by the time of that answer: a
// window of them (what_happened's two minutes) is a search, not a read
// of every dialog. Built on a snapshot's second ask: a live store asks
// each snapshot once, and reads its failures from a carried RowColumn.
type failureColumn struct {
	once sync.Once
	ats  []int64 // FinalAt, UnixNano, ascending
	rows []int32 // the dialog of each
	ok   bool    // built: room, and every failure's time in UnixNano's range
}

// EachFailure calls fn, in the order of Snapshot.Dialogs, for each
// dialog answered with a final code of 400 or more at a time in since
// to until (until excluded; a zero bound is none): from the snapshot's
// failure column from its second ask on, from its carried failures on
// the first, and from every dialog for a bound UnixNano cannot hold or
// without room for either.
func (sn *Snapshot) EachFailure(since, until time.Time, fn func(*Dialog)) {
	failed := func(d *Dialog) bool {
		return d.FinalCode >= 400 && !d.FinalAt.IsZero() && (since.IsZero() || !d.FinalAt.Before(since)) && (until.IsZero() || d.FinalAt.Before(until))
	}
	if !outsideNano(since) && !outsideNano(until) {
		if fc := sn.failureColumn(); fc != nil {
			fc.each(sn.Dialogs, since, until, fn)
			return
		}
		if sn.eachFailureRow(since, until, failed, fn) {
			return
		}
	}
	for _, d := range sn.Dialogs {
		if failed(d) {
			fn(d)
		}
	}
}

// each calls fn, in the order of ds (the snapshot's dialogs), for each
// failed dialog answered in since to until.
func (fc *failureColumn) each(ds []*Dialog, since, until time.Time, fn func(*Dialog)) {
	lo, hi := 0, len(fc.ats)
	if !since.IsZero() {
		lo, _ = slices.BinarySearch(fc.ats, since.UnixNano())
	}
	if !until.IsZero() {
		hi, _ = slices.BinarySearch(fc.ats, until.UnixNano())
	}
	rows := slices.Clone(fc.rows[lo:max(lo, hi)])
	slices.Sort(rows) // the dialogs' order, as the scan gives them
	for _, r := range rows {
		fn(ds[r])
	}
}

// badClock stands in a failure row for a time UnixNano cannot hold: the
// dialog itself is tested.
const badClock = math.MinInt64

// eachFailureRow is EachFailure on a snapshot's first ask: a live store
// asks each snapshot once, so its failures (every failed dialog's answer
// time, in the dialogs' order) are a RowColumn carried from the snapshot
// before, read in sequence instead of every dialog. It reports false,
// having called nothing, when there is no room for the column.
func (sn *Snapshot) eachFailureRow(since, until time.Time, failed func(*Dialog) bool, fn func(*Dialog)) bool {
	ats, ends, ok := RowColumn(sn, "sip failures", func(d *Dialog, ats []int64) []int64 {
		switch {
		case d.FinalCode < 400 || d.FinalAt.IsZero():
			return ats
		case outsideNano(d.FinalAt):
			return append(ats, badClock)
		}
		return append(ats, d.FinalAt.UnixNano())
	})
	if !ok {
		return false
	}
	lo, hi := since.UnixNano(), until.UnixNano()
	in := func(ns int64) bool { return (since.IsZero() || ns >= lo) && (until.IsZero() || ns < hi) }
	at := int32(0)
	for r, end := range ends {
		if end == at {
			continue
		}
		ns := ats[at]
		at = end
		if d := sn.Dialogs[r]; ns == badClock && failed(d) || ns != badClock && in(ns) {
			fn(d)
		}
	}
	return true
}

// minNano and maxNano bound the times UnixNano holds.
var minNano, maxNano = time.Unix(0, math.MinInt64), time.Unix(0, math.MaxInt64)

// outsideNano is whether t is a bound UnixNano cannot hold (the zero
// time is no bound).
func outsideNano(t time.Time) bool { return !t.IsZero() && (t.Before(minNano) || t.After(maxNano)) }

// failureColumn returns the snapshot's failure column from its second
// ask on, or nil.
func (sn *Snapshot) failureColumn() *failureColumn {
	c := &sn.site
	if c.ask("failures") < 2 {
		return nil
	}
	fc := &c.failures
	fc.once.Do(func() {
		if !c.room() {
			return
		}
		type failure struct {
			at  int64
			row int32
		}
		var fs []failure
		for i, d := range sn.Dialogs {
			if i%warmBlock == 0 {
				warm(sn.Dialogs[i:min(i+warmBlock, len(sn.Dialogs))])
			}
			if d.FinalCode < 400 || d.FinalAt.IsZero() {
				continue
			}
			if outsideNano(d.FinalAt) {
				return // a bad clock: the scan it is
			}
			fs = append(fs, failure{d.FinalAt.UnixNano(), int32(i)})
		}
		slices.SortFunc(fs, func(a, b failure) int { return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.row, b.row)) })
		fc.ats, fc.rows = make([]int64, len(fs)), make([]int32, len(fs))
		for i, f := range fs {
			fc.ats[i], fc.rows[i] = f.at, f.row
		}
		fc.ok = true
		c.hold(12 * int64(len(fs)))
	})
	if !fc.ok {
		return nil
	}
	return fc
}

// markColumn is every dialog's timeline marks (appendMarks) in the order
// of Snapshot.Dialogs, row r's ending at ends[r]: a timeline without a
// filter reads them in sequence instead of every dialog and its
// transactions. Built on a snapshot's first ask, which costs what one
// scan does, as a RowColumn: a live store asks each snapshot once, and
// its next snapshot carries the column on, reading only the dialogs
// changed since.
type markColumn struct {
	once  sync.Once
	marks []mark
	ends  []int32 // nil: not built (no room)
}

// row is row r's marks, its creation first.
func (mc *markColumn) row(r int) []mark {
	from := int32(0)
	if r > 0 {
		from = mc.ends[r-1]
	}
	return mc.marks[from:mc.ends[r]]
}

// markColumn returns the snapshot's mark column, built (or carried on)
// on its first ask, or nil without room.
func (sn *Snapshot) markColumn() *markColumn {
	mc := &sn.site.marks
	mc.once.Do(func() {
		var as []Attempt
		of := func(d *Dialog, marks []mark) []mark {
			marks, as = appendMarks(marks, d, as[:0])
			return marks
		}
		if marks, ends, ok := rowColumn(sn, marksKey, of, warmAttempts); ok {
			mc.marks, mc.ends = marks, ends
		}
	})
	if mc.ends == nil {
		return nil
	}
	return mc
}

// marksKey is the mark column's RowColumn key.
const marksKey = "sip timeline marks"

// Timeline is Timeline over the snapshot's dialogs that e matches, read
// from its mark column when the column is built and e is empty or reads
// only columned fields (final_code >= 400: the rows it matches come from
// the filter columns, carried as list_dialogs' are), so no dialog is read.
func (sn *Snapshot) Timeline(e *filter.Expr, widths []time.Duration, since, until time.Time, maxBuckets int) ([]TimeBucket, time.Duration, error) {
	var mc *markColumn
	var in []uint64 // the rows e matches, a bit each; nil for every row
	switch {
	case e.MatchesAll():
		mc = sn.markColumn()
	case e.ReadsOnly(isColumned):
		if c := sn.columns(); c != nil {
			if mc = sn.markColumn(); mc != nil {
				in = sn.matchRows(c, e)
			}
		}
	}
	if mc == nil {
		return Timeline(sn.Dialogs, matcher(e), widths, since, until, maxBuckets)
	}
	sel := newMarkSpan(since, until)
	all := since.IsZero() && until.IsZero() && in == nil
	if all {
		sel.marks = mc.marks // only read
	}
	for r := range mc.ends {
		if !has(in, r) {
			continue
		}
		row := mc.row(r)
		if !all {
			if !sel.holds(row[0].at) {
				continue
			}
			sel.marks = append(sel.marks, row...)
		}
		sel.widen(row)
	}
	return sel.buckets(widths, maxBuckets)
}

// problemColumn is every dialog's problem set (problemSet), in the
// order of Snapshot.Dialogs: find_problems over it reads 4 bytes a
// dialog in sequence, and only the dialogs it lists (their ids are the
// rows', Snapshot.id).
type problemColumn struct {
	once sync.Once
	sets []uint32 // nil: not built (no room)
}

// problemColumn returns the snapshot's problem column, built (or
// carried on from the store's previous snapshot) on its first problem
// test, or nil without room.
func (sn *Snapshot) problemColumn() *problemColumn {
	c := &sn.site
	pc := &c.problems
	pc.once.Do(func() {
		ds := sn.Dialogs
		if !c.room() {
			return
		}
		if !sn.carryProblems(pc) {
			pc.sets = make([]uint32, len(ds))
			for i := 0; i < len(ds); i += warmBlock {
				block := ds[i:min(i+warmBlock, len(ds))]
				warmMemos(block)
				for j, d := range block {
					pc.sets[i+j] = problemSet(d)
				}
			}
		}
		c.hold(4 * int64(len(ds)))
		sn.keepProblems(pc)
	})
	if pc.sets == nil {
		return nil
	}
	return pc
}

// has reports whether dialog i of ds (the snapshot's) matches one of
// mask's aliases: from the column, or from the dialog when pc is nil.
func (pc *problemColumn) has(ds []*Dialog, i int, mask uint32) bool {
	if pc == nil {
		return AnyProblem(ds[i], mask)
	}
	return pc.sets[i]&mask != 0
}

// keyColumn is one dimension's keys of every dialog of a snapshot, in
// the order of Snapshot.Dialogs: ids (and ends in a MultiDimension) as
// groupRows holds them, values by id.
type keyColumn struct {
	once      sync.Once
	multi     bool
	ids, ends []int32
	values    []string
	from      *carriedKeys // what it was carried from, if it was
	ix        struct {
		once sync.Once
		accs []MetricsAcc // by key id; nil: not built (no room)
		all  MetricsAcc   // counts only
	}
}

// index returns the groups of every dialog of the snapshot (rows, the
// snapshot's figureRows), each with its PDD samples sorted, and every
// dialog together (its samples sortedSamples): an answer without a
// filter reads their percentiles by rank instead of selecting them again
// on every call. Carried from the kept column's index when kc was
// carried (a live store's), or built: sorted, when build (a quiet
// store's second ask). Once, when there is room (ok false without); only
// read after.
func (kc *keyColumn) index(sn *Snapshot, dim string, rows *groupRows, build bool) (accs []MetricsAcc, all MetricsAcc, ok bool) {
	c := &sn.site
	kc.ix.once.Do(func() {
		if !c.room() {
			return
		}
		if kc.from != nil {
			if accs, all, ok := sn.carryIndex(kc, kc.from, rows); ok {
				kc.ix.accs, kc.ix.all = accs, all
				c.hold(int64(unsafe.Sizeof(MetricsAcc{})) * int64(cap(accs)))
				sn.keepIndex(dimIndex(dim), accs, all, rows)
				return
			}
		}
		if !build {
			return
		}
		var sc groupScratch // its pdds stay the index's
		accs, all := groupsOf(rows, len(kc.values))
		sc.group(rows, len(kc.values), false)
		for id := range accs {
			p := sc.groupPDDs(int32(id))
			slices.Sort(p)
			accs[id].pdd, accs[id].sorted = p, true
		}
		kc.ix.accs, kc.ix.all = accs, all
		c.hold(int64(unsafe.Sizeof(MetricsAcc{}))*int64(cap(accs)) + 8*int64(cap(sc.pdds)) + 4*int64(cap(sc.counts)))
		sn.keepIndex(dimIndex(dim), accs, all, rows)
	})
	if kc.ix.accs == nil {
		return nil, MetricsAcc{}, false
	}
	all = kc.ix.all
	if p := sn.sortedSamples(rows); p != nil {
		all.pdd, all.sorted = p, true
	}
	return kc.ix.accs, all, true
}

// sortedSamples are every sample of rows (the snapshot's figureRows)
// sorted, once a snapshot: carried from the kept ones, or sorted; nil
// without room.
func (sn *Snapshot) sortedSamples(rows *groupRows) []float64 {
	c := &sn.site
	f := &c.figs
	f.sortedOnce.Do(func() {
		if !c.room() {
			return // the answer selects from the rows' samples instead
		}
		sorted, ok := sn.carrySorted(rows)
		if !ok {
			sorted = make([]float64, len(rows.samples))
			for i, s := range rows.samples {
				sorted[i] = s.pdd
			}
			slices.Sort(sorted)
		}
		f.sorted = sorted
		c.hold(8 * int64(len(f.sorted)))
		sn.keepSorted(rows, sorted)
	})
	return f.sorted
}

// keyColumn returns dim's key column, built (or carried on from the
// store's previous snapshot) on its first ask, or nil without room; asks
// is how many times answer has asked for it by dim on sn.
func (sn *Snapshot) keyColumn(answer, dim string) (kc *keyColumn, asks int) {
	c := &sn.site
	asks = c.ask(answer + " " + dim)
	c.mu.Lock()
	kc = c.keys[dim]
	if kc == nil && c.bytes < c.share {
		kc = &keyColumn{}
		c.keys[dim] = kc
	}
	c.mu.Unlock()
	if kc == nil {
		return nil, asks
	}
	kc.once.Do(func() {
		d := dimIndex(dim)
		k := sn.carryKeys(kc, d)
		if k == nil {
			k = kc.build(sn.Dialogs, dim)
		}
		// The keyer's maps, kept for the next snapshot: about 32 bytes
		// a value, and the texts it made.
		c.hold(4*int64(cap(kc.ids)+cap(kc.ends)) + 48*int64(cap(kc.values)) + k.texts)
		sn.keepKeys(d, kc, k)
	})
	return kc, asks
}

// ask counts one more ask of key (an answer and what it reads) on the
// snapshot and returns how many there have been.
func (c *siteColumns) ask(key string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.asks == nil {
		c.asks, c.keys = map[string]int{}, map[string]*keyColumn{}
	}
	c.asks[key]++
	return c.asks[key]
}

// room reports whether another column may be built; hold counts one
// built.
func (c *siteColumns) room() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes < c.share
}

func (c *siteColumns) hold(n int64) {
	c.mu.Lock()
	c.bytes += n
	c.mu.Unlock()
}

// build fills kc from ds and returns the keyer that numbered it.
func (kc *keyColumn) build(ds []*Dialog, dim string) *keyer {
	k := newKeyer(dim)
	kc.multi = MultiDimension(dim)
	kc.ids = make([]int32, 0, len(ds))
	if kc.multi {
		kc.ends = make([]int32, 0, len(ds))
	}
	for i, d := range ds {
		if i%warmBlock == 0 {
			k.warm(ds[i:min(i+warmBlock, len(ds))])
		}
		kc.ids = append(kc.ids, k.keys(d)...)
		if kc.multi {
			kc.ends = append(kc.ends, int32(len(kc.ids)))
		}
	}
	kc.values = k.values
	return k
}

// figureRows are the snapshot's dialogs as groupRows with kc's keys, or
// nil when their figures have no room.
func (sn *Snapshot) figureRows(kc *keyColumn) *groupRows {
	f := sn.figureColumns()
	if f == nil {
		return nil
	}
	return &groupRows{multi: kc.multi, shares: f.shares, samples: f.samples, ids: kc.ids, ends: kc.ends}
}

// figureColumns are the snapshot's dialogs' figures as rows without keys
// (shares and PDD samples), built or carried on the first ask, or nil
// when they have no room.
func (sn *Snapshot) figureColumns() *groupRows {
	c := &sn.site
	f := &c.figs
	f.once.Do(func() {
		ds := sn.Dialogs
		if !c.room() {
			return
		}
		if !sn.carryFigures(&f.rows) {
			f.rows.shares = make([]rowShare, 0, len(ds))
			for i, d := range ds {
				if i%warmBlock == 0 {
					warmMemos(ds[i:min(i+warmBlock, len(ds))])
				}
				f.rows.addFigures(d)
			}
		}
		c.hold(int64(unsafe.Sizeof(rowShare{}))*int64(cap(f.rows.shares)) + int64(unsafe.Sizeof(rowPDD{}))*int64(cap(f.rows.samples)))
		sn.keepFigures(f.rows)
	})
	if f.rows.shares == nil {
		return nil
	}
	return &f.rows
}

// siteColumns returns dim's key column and the rows e matches (nil:
// every row) when the answer can be read from the snapshot's columns:
// e is empty or reads only columned fields (columns); asks is how many
// times answer asked for dim.
func (sn *Snapshot) siteColumns(e *filter.Expr, answer, dim string) (kc *keyColumn, in []uint64, asks int) {
	if !e.MatchesAll() {
		if !e.ReadsOnly(isColumned) {
			return nil, nil, 0
		}
		c := sn.columns()
		if c == nil {
			return nil, nil, 0
		}
		if kc, asks = sn.keyColumn(answer, dim); kc == nil {
			return nil, nil, 0
		}
		return kc, sn.matchRows(c, e), asks
	}
	kc, asks = sn.keyColumn(answer, dim)
	return kc, nil, asks
}

func has(in []uint64, r int) bool { return in == nil || in[r/64]&(1<<(r%64)) != 0 }

// Aggregate is Aggregate over the snapshot's dialogs that e matches,
// read from the snapshot's columns where it can be (siteColumns).
func (sn *Snapshot) Aggregate(e *filter.Expr, dim string, maxBuckets int) Aggregation {
	kc, in, _ := sn.siteColumns(e, "aggregate", dim)
	if kc == nil {
		return Aggregate(sn.Dialogs, matcher(e), dim, maxBuckets)
	}
	counts := make([]int, len(kc.values))
	matched := 0
	rows := groupRows{multi: kc.multi, ids: kc.ids, ends: kc.ends}
	for r := range sn.Dialogs {
		if has(in, r) {
			for _, id := range rows.keysOf(int32(r)) {
				counts[id]++
			}
			matched++
		}
	}
	return bucketsOf(counts, kc.values, kc.multi, matched, maxBuckets)
}

// AggregateRows is Aggregate over every one of the snapshot's dialogs
// lo to hi (a window of dialogs that began together: a side of
// compare_captures), read from its dim column where there is one. It
// panics unless 0 <= lo <= hi <= len(sn.Dialogs), as a slice would.
func (sn *Snapshot) AggregateRows(lo, hi int, dim string, maxBuckets int) Aggregation {
	part := sn.Dialogs[lo:hi]
	kc, _ := sn.keyColumn("rows", dim)
	if kc == nil {
		return Aggregate(part, nil, dim, maxBuckets)
	}
	counts := make([]int, len(kc.values))
	rows := groupRows{multi: kc.multi, ids: kc.ids, ends: kc.ends}
	for r := lo; r < hi; r++ {
		for _, id := range rows.keysOf(int32(r)) {
			counts[id]++
		}
	}
	return bucketsOf(counts, kc.values, kc.multi, len(part), maxBuckets)
}

// MetricsRows is the call figures of every one of the snapshot's
// dialogs lo to hi, as a MetricsAcc of them gives, read from its figure
// columns where there are some. It panics unless 0 <= lo <= hi <=
// len(sn.Dialogs).
func (sn *Snapshot) MetricsRows(lo, hi int) CallMetrics {
	part := sn.Dialogs[lo:hi]
	rows := sn.figureColumns()
	if rows == nil {
		var acc MetricsAcc
		for _, d := range part {
			acc.Add(d)
		}
		return acc.Result()
	}
	acc := MetricsAcc{dialogs: len(part)}
	for r := lo; r < hi; r++ {
		f := rows.shares[r].figures()
		acc.add(&f)
	}
	// The samples are in row order: the run's lie together.
	first, end := sortSearch(rows.samples, int32(lo)), sortSearch(rows.samples, int32(hi))
	acc.pdd = make([]float64, end-first) // percentiles reorders what it is given
	for i, s := range rows.samples[first:end] {
		acc.pdd[i] = s.pdd
	}
	return acc.Result()
}

// CountStates counts the snapshot's dialogs by state (the state
// dimension's column where there is one); empty, never nil, without a
// dialog.
func (sn *Snapshot) CountStates() map[string]int {
	ag := sn.Aggregate(nil, "state", math.MaxInt)
	n := make(map[string]int, len(ag.Buckets))
	for _, b := range ag.Buckets {
		n[b.Value] = b.Count
	}
	return n
}

// GroupMetrics is GroupMetrics over the snapshot's dialogs that e
// matches, read from the snapshot's columns where it can be
// (siteColumns).
func (sn *Snapshot) GroupMetrics(e *filter.Expr, dim string, maxGroups int) Grouping {
	kc, in, asks := sn.siteColumns(e, "group", dim)
	var rows *groupRows
	if kc != nil {
		rows = sn.figureRows(kc)
	}
	if rows == nil {
		return GroupMetrics(sn.Dialogs, matcher(e), dim, maxGroups)
	}
	sc := groupScratches.Get().(*groupScratch)
	defer sc.release()
	// A quiet store's second ask sorts the groups once, read by rank
	// after; a live store's carried column carries them on.
	if in == nil && (asks >= 2 || kc.from != nil) {
		if accs, all, ok := kc.index(sn, dim, rows, true); ok {
			sc.pdds = slices.Grow(sc.pdds[:0], len(rows.samples)) // other's room
			return sc.rank(rows, accs, all, kc.values, maxGroups)
		}
	}
	if in == nil {
		return sc.measure(rows, kc.values, maxGroups) // the columns' samples copied, as measure does
	}
	from := rows
	rows = &sc.rows
	rows.multi = from.multi
	next := 0
	for r := range sn.Dialogs {
		if has(in, r) {
			next = rows.addRow(from, int32(r), next)
		}
	}
	return sc.measure(rows, kc.values, maxGroups)
}

// matcher is e as the dialog predicate Aggregate and GroupMetrics take:
// nil for the empty filter, so they skip the reads a filter needs.
func matcher(e *filter.Expr) func(*Dialog) bool {
	if e.MatchesAll() {
		return nil
	}
	return func(d *Dialog) bool { return e.Match(d) }
}
