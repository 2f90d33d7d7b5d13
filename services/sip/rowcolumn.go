package sip

import "unsafe"

// carriedRowColumns is how many RowColumn keys the carrier keeps: the
// security analysis' (one key a list of scanner names), the timeline's,
// the failures' and a spare.
const carriedRowColumns = 4

// carriedRowColumn is the newest snapshot's RowColumn of one key: vals
// is a []T.
type carriedRowColumn struct {
	key  string
	rows rowsOf
	vals any
	ends []int32
}

// RowColumn returns what of derives from every dialog of sn, in the order
// of sn.Dialogs: row i's values are vals[ends[i-1]:ends[i]] (from 0 for
// row 0), as of(d, vals) appended them. A caller keeps with it what it
// reads of every dialog at each call (the security analysis' events, the
// timeline's marks, every failure's time): on a live store,
// whose every call gets a new snapshot, the column is carried from the
// newest one of the same key, a dialog unchanged since being its values
// copied (in runs), so only the dialogs changed or added since are read.
// key must name everything of depends on besides the dialog, and T must
// hold nothing of a dialog the store changes (values, shared texts).
// ok is false when the snapshot's share for columns is spent: the caller
// reads the dialogs.
func RowColumn[T any](sn *Snapshot, key string, of func(d *Dialog, vals []T) []T) (vals []T, ends []int32, ok bool) {
	return rowColumn(sn, key, of, nil)
}

// rowColumn is RowColumn; ahead, when given, is called with each block
// of warmBlock dialogs a build without a carried column is about to read,
// to load what of reads of them (warm).
func rowColumn[T any](sn *Snapshot, key string, of func(d *Dialog, vals []T) []T, ahead func([]*Dialog)) (vals []T, ends []int32, ok bool) {
	c := &sn.site
	if !c.room() {
		return nil, nil, false
	}
	ds := sn.Dialogs
	var from *carriedRowColumn
	sn.locked(func(cr *carrier) {
		for _, rc := range cr.rowCols {
			if rc.key == key && sn.carries(rc.rows) {
				from = rc
			}
		}
	})
	ends = make([]int32, 0, len(ds))
	if from == nil {
		for i, d := range ds {
			if ahead != nil && i%warmBlock == 0 {
				ahead(ds[i:min(i+warmBlock, len(ds))])
			}
			vals = of(d, vals)
			ends = append(ends, int32(len(vals)))
		}
	} else {
		fv := from.vals.([]T)
		vals = make([]T, 0, len(fv)+max(len(ds)-from.rows.n, 0))
		shift := int(sn.rows.first - from.rows.first)
		for i := 0; i < len(ds); {
			if n := sn.sameRun(from.rows, i); n > 0 { // rows j to j+n of from, in one copy
				j := i + shift
				lo := int32(0)
				if j > 0 {
					lo = from.ends[j-1]
				}
				base := int32(len(vals)) - lo
				vals = append(vals, fv[lo:from.ends[j+n-1]]...)
				for _, e := range from.ends[j : j+n] {
					ends = append(ends, e+base)
				}
				i += n
				continue
			}
			vals = of(ds[i], vals)
			ends = append(ends, int32(len(vals)))
			i++
		}
	}
	var zero T
	c.hold(int64(cap(vals))*int64(unsafe.Sizeof(zero)) + 4*int64(cap(ends)))
	sn.keepRowColumn(&carriedRowColumn{key: key, rows: sn.rows, vals: vals, ends: ends})
	return vals, ends, true
}

// keepRowColumn offers rc to the snapshots after its own, in place of
// an older column of its key; past carriedRowColumns keys the one kept
// longest is dropped.
func (sn *Snapshot) keepRowColumn(rc *carriedRowColumn) {
	sn.locked(func(cr *carrier) {
		kept := cr.rowCols[:0]
		for _, o := range cr.rowCols {
			if o.key != rc.key {
				kept = append(kept, o)
			} else if o.rows.epoch > rc.rows.epoch {
				rc = o // a newer snapshot's column is kept
			}
		}
		if len(kept) == carriedRowColumns {
			kept = append(kept[:0], kept[1:]...)
		}
		cr.rowCols = append(kept, rc)
		cr.used.Store(true)
	})
}
