package sip

import (
	"math"
	"math/bits"
	"strings"
	"unsafe"

	"fieldtap/services/filter"
)

// columned marks the fields a snapshot also holds as columns: the ones
// most dialog filters compare (final_code >= 400 and from_user ~ "^14").
var columned = [...]bool{fFinalCode: true, fFromUser: true, fToUser: true}

func isColumned(i int) bool { return i < len(columned) && columned[i] }

// columns hold a snapshot's columned fields, one pointer-free row per
// dialog in the order of Snapshot.Dialogs, and every From and To user
// back to back in one string. A filter reading only these fields reads
// 16 bytes a dialog in sequence instead of a dialog struct and two
// strings spread over the heap: at 100 000 dialogs each of those is a
// cache miss, most of a filtered list_dialogs call (docs/benchmarks.md).
type columns struct {
	rows  []colRow
	users string
}

// colRow is one dialog's columns (its id is its place: Snapshot.id).
// Its From user ends at fromEnd in users and starts where the previous
// row's To user ended; its To user runs from fromEnd to toEnd.
type colRow struct {
	finalCode      int
	fromEnd, toEnd uint32
}

// newColumns builds the columns of ds, or nil when the users do not fit
// the row's 32-bit offsets (then filters read the dialogs).
func newColumns(ds []*Dialog) *columns {
	n := 0
	for _, d := range ds {
		n += len(d.FromUser) + len(d.ToUser)
	}
	if uint64(n) > math.MaxUint32 { // uint64: the bound passes a 32-bit int
		return nil
	}
	var users strings.Builder // its String does not copy
	users.Grow(n)
	rows := make([]colRow, len(ds))
	for i := 0; i < len(ds); i += warmBlock {
		block := ds[i:min(i+warmBlock, len(ds))]
		warm(block)
		for j, d := range block {
			rows[i+j] = addRow(&users, d)
		}
	}
	return &columns{rows: rows, users: users.String()}
}

// addRow is d's row, its users appended to users.
func addRow(users *strings.Builder, d *Dialog) colRow {
	r := colRow{finalCode: d.FinalCode}
	users.WriteString(d.FromUser)
	r.fromEnd = uint32(users.Len())
	users.WriteString(d.ToUser)
	r.toEnd = uint32(users.Len())
	return r
}

// colCursor is one row of columns as a filter.Record.
type colCursor struct {
	c    *columns
	i    int
	from uint32 // where the row's From user starts
}

// at puts the cursor on row i, whose From user starts where row i-1's
// To user ended.
func (k *colCursor) at(i int) {
	k.i, k.from = i, 0
	if i > 0 {
		k.from = k.c.rows[i-1].toEnd
	}
}

// Num and Str answer for the columned fields as Dialog.Field does
// (filter.Scalars); Field is them as a Value.
func (k *colCursor) Num(i int) (float64, bool) {
	if i != fFinalCode {
		panic("sip: a filter read a number the columns do not hold")
	}
	return finalCode(k.c.rows[k.i].finalCode)
}

func (k *colCursor) Str(i int) (string, bool) {
	r := &k.c.rows[k.i]
	switch i {
	case fFromUser:
		return k.c.users[k.from:r.fromEnd], false
	case fToUser:
		return k.c.users[r.fromEnd:r.toEnd], false
	}
	panic("sip: a filter read a string the columns do not hold")
}

func (k *colCursor) Field(i int) filter.Value {
	if i == fFinalCode {
		v, null := k.Num(i)
		return filter.Value{Num: v, Null: null}
	}
	s, _ := k.Str(i)
	return filter.Value{Str: s}
}

// Each calls visit with the id and the dialog of every dialog of the
// snapshot e matches and, unless problems is 0, that matches one of the
// problem set's aliases (ProblemMask), oldest first. A filter reading
// only columned fields is evaluated on the snapshot's columns (columns),
// and the problem test on its problem column (problemColumn); the id
// then comes from the row's place (Snapshot.id), so a visit that only
// counts reads no dialog.
// Any other filter (the empty one too, whose caller reads the dialogs
// anyway) is evaluated on the dialogs, warmed a block at a time: what
// the filter reads, what the problem test reads.
func (sn *Snapshot) Each(e *filter.Expr, problems uint32, visit func(id uint64, d *Dialog)) {
	columned := !e.MatchesAll() && e.ReadsOnly(isColumned)
	var pc *problemColumn
	if problems != 0 && (columned || e.MatchesAll()) {
		pc = sn.problemColumn()
	}
	if columned {
		if c := sn.columns(); c != nil {
			for w, word := range sn.matchRows(c, e) {
				for ; word != 0; word &= word - 1 {
					i := w*64 + bits.TrailingZeros64(word)
					if problems == 0 || pc.has(sn.Dialogs, i, problems) {
						visit(sn.id(i), sn.Dialogs[i])
					}
				}
			}
			return
		}
	}
	if pc != nil && e.MatchesAll() {
		for i, set := range pc.sets {
			if set&problems != 0 {
				visit(sn.id(i), sn.Dialogs[i])
			}
		}
		return
	}
	ds := sn.Dialogs
	for i := 0; i < len(ds); i += warmBlock {
		block := ds[i:min(i+warmBlock, len(ds))]
		if !e.MatchesAll() {
			warm(block)
		}
		if problems != 0 {
			warmMemos(block)
		}
		for _, d := range block {
			if e.Match(d) && (problems == 0 || AnyProblem(d, problems)) {
				visit(d.ID, d)
			}
		}
	}
}

// each calls visit with the index of every row e (reading only columned
// fields) matches, in order.
func (c *columns) each(e *filter.Expr, visit func(i int)) {
	k := &colCursor{c: c}
	var rec filter.Record = k
	var sc filter.Scalars = k
	for i := range c.rows {
		k.at(i)
		if e.MatchScalars(rec, sc) {
			visit(i)
		}
	}
}

// columns returns the snapshot's filter columns, built on its first
// filter (or carried on from the store's previous snapshot: a live store
// gives each call a new snapshot), or nil without room (siteColumns).
func (sn *Snapshot) columns() *columns {
	sn.colOnce.Do(func() {
		if sn.site.room() {
			if sn.cols = sn.carryColumns(); sn.cols == nil {
				sn.cols = newColumns(sn.Dialogs)
			}
			if sn.cols != nil {
				sn.site.hold(int64(unsafe.Sizeof(colRow{}))*int64(cap(sn.cols.rows)) + int64(len(sn.cols.users)))
				sn.keepColumns(sn.cols)
			}
		}
	})
	return sn.cols
}

// warmBlock is how many dialogs a filtered scan warms at once.
const warmBlock = 64
