package mcp

import (
	"cmp"
	"encoding/base64"
	"slices"
	"strconv"
	"strings"

	"fieldtap/services/ring"
)

// rowKey orders the rows of a list: a cursor names the first row of the
// next page by its key, so rows sharing a time are neither lost nor
// repeated. Single-key rows (a ring's sequence number, a dialog id) use
// the first half; rows from several ports use (port index, sequence).
type rowKey [2]uint64

func key1(k uint64) rowKey { return rowKey{k, 0} }

func (a rowKey) less(b rowKey) bool {
	return a[0] < b[0] || a[0] == b[0] && a[1] < b[1]
}

// cursorVersion tags the encoding so a future change refuses old cursors
// instead of misreading them.
const cursorVersion = "c1"

// encodeCursor is opaque to clients: the version, the tool that issued it
// (its kind), the capture identity and the key.
func encodeCursor(kind, capture string, k rowKey) string {
	s := cursorVersion + "|" + kind + "|" + capture + "|" + strconv.FormatUint(k[0], 10) + "|" + strconv.FormatUint(k[1], 10)
	return base64.RawURLEncoding.EncodeToString([]byte(s))
}

// decodeCursor refuses, with the one stale-cursor error, a cursor that
// another tool or another capture run issued, or that is not a cursor.
func decodeCursor(kind, capture, c string) (rowKey, error) {
	stale := failErr(CodeStaleCursor, "cursor was not issued by "+kind+" in this capture run",
		"call "+kind+" again without a cursor; cursors do not survive a restart and are not shared between tools")
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return rowKey{}, stale
	}
	parts := strings.Split(string(b), "|")
	if len(parts) != 5 || parts[0] != cursorVersion || parts[1] != kind || parts[2] != capture {
		return rowKey{}, stale
	}
	var k rowKey
	for i := range k {
		if k[i], err = strconv.ParseUint(parts[3+i], 10, 64); err != nil {
			return rowKey{}, stale
		}
	}
	return k, nil
}

// pager is the one pager of every list tool: rows are offered in
// ascending key order, every match is counted (total_matched), the page
// takes limit rows from the cursor on, and the first match left out
// becomes next_cursor.
type pager struct {
	c       *call
	limit   int
	from    rowKey
	resumed bool // a cursor was given
	taken   int
	matched int
	next    string
	keys    []rowKey // of the rows taken, for a cut to the byte budget
}

func newPager(c *call, p Paging) (*pager, error) {
	pg := &pager{c: c, limit: p.Limit.rows()}
	if p.Cursor != "" {
		k, err := decodeCursor(c.req.Params.Name, c.src.CaptureIdentity, string(p.Cursor))
		if err != nil {
			return nil, err
		}
		pg.from, pg.resumed = k, true
	}
	return pg, nil
}

// offer counts one matching row and reports whether it goes on the page.
func (pg *pager) offer(k rowKey) bool {
	pg.matched++
	switch {
	case k.less(pg.from):
		return false
	case pg.taken < pg.limit:
		pg.taken++
		pg.keys = append(pg.keys, k)
		return true
	case pg.next == "":
		pg.next = encodeCursor(pg.c.req.Params.Name, pg.c.src.CaptureIdentity, k)
	}
	return false
}

// room reports whether the next match goes on the page.
func (pg *pager) room() bool { return pg.taken < pg.limit }

// page is the envelope's page record. A short page says it is short.
func (pg *pager) page() Page {
	return Page{Returned: pg.taken, TotalMatched: pg.matched, Truncated: pg.next != "", NextCursor: pg.next, keys: pg.keys}
}

// evicted warns that n rows between the cursor and the oldest one kept
// were evicted by the store's bounds: the page resumes at the oldest.
func (pg *pager) evicted(n uint64, what string) {
	if n > 0 {
		pg.c.warnf("%d %s between the cursor and the oldest one kept were evicted by the store's bounds", n, what)
	}
}

// pageRing pages one ring snapshot oldest first, keyed by sequence
// number, warning when the cursor's rows were evicted.
func pageRing[T, R any](c *call, p Paging, snap ring.Snapshot[T], what string, keep func(T) bool, row func(seq uint64, v T) R) (page[R], error) {
	pg, err := newPager(c, p)
	if err != nil {
		return page[R]{}, err
	}
	rows := []R{}
	snap.Range(0, func(seq uint64, v T) bool {
		if keep(v) && pg.offer(key1(seq)) {
			rows = append(rows, row(seq, v))
		}
		return true
	})
	if first := snap.FirstSeq(); pg.resumed && pg.from[0] < first {
		pg.evicted(first-pg.from[0], what)
	}
	return page[R]{Items: rows, Page: pg.page()}, nil
}

// portRing is one port's ring for pagePortRings: its index among the
// store's ports (stable: ports are only ever added) and its snapshot.
type portRing[T any] struct {
	index uint64
	name  string
	snap  ring.Snapshot[T]
}

// pagePortRings pages the rings of several ports, port by port in the
// store's order and each port oldest first, keyed (port index, sequence),
// warning when a cursor's rows were evicted.
func pagePortRings[T, R any](c *call, p Paging, rings []portRing[T], what string, keep func(port string, v T) bool, row func(port string, seq uint64, v T) R) (page[R], error) {
	pg, err := newPager(c, p)
	if err != nil {
		return page[R]{}, err
	}
	rows := []R{}
	for _, pr := range rings {
		pr.snap.Range(0, func(seq uint64, v T) bool {
			if keep(pr.name, v) && pg.offer(rowKey{pr.index, seq}) {
				rows = append(rows, row(pr.name, seq, v))
			}
			return true
		})
		if first := pr.snap.FirstSeq(); pg.resumed && pg.from[0] == pr.index && pg.from[1] < first {
			pg.evicted(first-pg.from[1], what)
		}
	}
	return page[R]{Items: rows, Page: pg.page()}, nil
}

// pageSlice pages rows that are all in memory, in ascending key order
// (it sorts a copy, so callers need not).
func pageSlice[T any](c *call, p Paging, rows []T, key func(T) rowKey) (page[T], error) {
	pg, err := newPager(c, p)
	if err != nil {
		return page[T]{}, err
	}
	sorted := slices.Clone(rows)
	slices.SortStableFunc(sorted, func(a, b T) int {
		ka, kb := key(a), key(b)
		return cmp.Or(cmp.Compare(ka[0], kb[0]), cmp.Compare(ka[1], kb[1]))
	})
	out := []T{}
	for _, r := range sorted {
		if pg.offer(key(r)) {
			out = append(out, r)
		}
	}
	return page[T]{Items: out, Page: pg.page()}, nil
}
