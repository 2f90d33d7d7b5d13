package mcp

import "fieldtap/services/ring"

// seqPage pages a ring snapshot oldest first: of the items keep accepts, it
// counts them all, returns up to limit rows from sequence number from on,
// and names the first row left out as the next cursor. A cursor is the ring
// sequence number with the capture identity (canCursor), so ties cannot be
// lost or repeated and a cursor from another run is refused.
func seqPage[T, R any](src SourceInfo, snap ring.Snapshot[T], from uint64, limit int,
	keep func(T) bool, row func(seq uint64, v T) R) ([]R, Page) {
	rows := []R{}
	matched, next := 0, ""
	snap.Range(0, func(seq uint64, v T) bool {
		if !keep(v) {
			return true
		}
		matched++
		switch {
		case seq < from:
		case len(rows) < limit:
			rows = append(rows, row(seq, v))
		case next == "":
			next = canCursor(src, seq)
		}
		return true
	})
	return rows, Page{Returned: len(rows), TotalMatched: matched, Truncated: next != "", NextCursor: next}
}
