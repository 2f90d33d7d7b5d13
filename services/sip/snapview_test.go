package sip

import "testing"

// TestDialogByIDFindsEveryKeptID holds the direct guess and its search
// fallback, and HoldsDialog's arithmetic, to a scan: ids in a row, with gaps (a dialog never kept, a
// view of some dialogs), before the first and past the last.
func TestDialogByIDFindsEveryKeptID(t *testing.T) {
	for _, ids := range [][]uint64{nil, {7}, {5, 6, 7, 8}, {5, 6, 7, 9, 10, 20}, {1, 3, 5, 7, 9}, {2, 40, 41}} {
		sn := &Snapshot{}
		for _, id := range ids {
			sn.Dialogs = append(sn.Dialogs, &Dialog{ID: id})
		}
		for id := uint64(0); id < 45; id++ {
			var want *Dialog
			for _, d := range sn.Dialogs {
				if d.ID == id {
					want = d
				}
			}
			if got := sn.DialogByID(id); got != want {
				t.Errorf("ids %v: DialogByID(%d) = %v, want %v", ids, id, got, want)
			}
			if got := sn.HoldsDialog(id); got != (want != nil) {
				t.Errorf("ids %v: HoldsDialog(%d) = %v, want %v", ids, id, got, want != nil)
			}
		}
	}
}
