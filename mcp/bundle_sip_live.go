package mcp

import (
	"cmp"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"fieldtap/services/coverage"
	"fieldtap/services/sip"
)

// tailKey orders dialogs by last update, then id, so equal times are
// neither lost nor repeated across polls. A time before the epoch (a
// capture's clock can be anything) sorts as the epoch.
func tailKey(d *sip.Dialog) rowKey {
	return rowKey{uint64(max(d.Updated.UnixNano(), 0)), d.ID}
}

// tailWarmBlock is how many dialogs warmTail and warmCreated read ahead.
const tailWarmBlock = 64

// warmTail reads the tail keys of a block of dialogs (two cache lines of
// each) in one loop of loads independent from one dialog to the next, so
// their cache misses overlap; read as the tail offers them, each waits
// for the one before (at 100,000 dialogs, most of the call).
func warmTail(ds []*sip.Dialog) {
	var s uint64
	for _, d := range ds {
		s += d.ID + uint64(d.Updated.Nanosecond())
	}
	tailSink.Add(s)
}

// warmCreated is warmTail for a side's window (compare_captures): each
// dialog's first message time.
func warmCreated(ds []*sip.Dialog) {
	var s uint64
	for _, d := range ds {
		s += uint64(d.Created.Nanosecond())
	}
	tailSink.Add(s)
}

// tailSink keeps warmTail's reads from being optimised away.
var tailSink atomic.Uint64

func cmpKey(a, b rowKey) int { return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1])) }

// after is the first key past k: a poll cursor names the first row it
// has not shown yet.
func after(k rowKey) rowKey { return rowKey{k[0], k[1] + 1} }

type tailIn struct {
	Filter filterArg `json:"filter,omitempty"`
	Paging
	Projection
}

var tailDialogs = tool[tailIn, page[dialogRow]]{
	name:  "tail_dialogs",
	reads: readsSIP,
	desc:  "Dialogs by last update, oldest change first: the newest without a cursor, then those updated since the cursor; next_cursor is always set, to poll with. Paged.",
	hints: readOnly(),
	ids:   []string{"call_id", "updated"},
	text:  []textSource{textSIP},
	run: func(c *call, in tailIn) (page[dialogRow], error) {
		sn := c.d.SIP.Snapshot()
		e, err := in.Filter.compile()
		if err != nil {
			return page[dialogRow]{}, err
		}
		pg, err := newPager(c, in.Paging)
		if err != nil {
			return page[dialogRow]{}, err
		}
		var hit []*sip.Dialog
		total := 0
		if pg.resumed {
			for _, dl := range sn.Dialogs {
				if !tailKey(dl).less(pg.from) && e.Match(dl) {
					hit = append(hit, dl)
				}
			}
			slices.SortFunc(hit, func(a, b *sip.Dialog) int { return cmpKey(tailKey(a), tailKey(b)) })
			total = len(hit)
		} else {
			// The tail: the newest changes, of every match counted.
			top := keySelect[*sip.Dialog]{n: pg.limit}
			for i, dl := range sn.Dialogs {
				if i%tailWarmBlock == 0 {
					warmTail(sn.Dialogs[i:min(i+tailWarmBlock, len(sn.Dialogs))])
				}
				if e.Match(dl) {
					total++
					top.offer(tailKey(dl), dl)
				}
			}
			for _, kv := range top.sorted() {
				hit = append(hit, kv.v)
			}
		}
		rows := []dialogRow{}
		for _, dl := range hit {
			if pg.offer(tailKey(dl)) {
				rows = append(rows, dialogRowOf(dl))
			}
		}
		p := pg.page()
		p.TotalMatched = total // without a cursor the older matches count too
		if p.NextCursor == "" {
			// Nothing is waiting: the next poll starts past the last row
			// shown (or where the cursor pointed, or at the start).
			next := pg.from
			if n := len(hit); n > 0 {
				next = after(tailKey(hit[n-1]))
			}
			p.NextCursor = encodeCursor(c.req.Params.Name, c.src.CaptureIdentity, next)
		}
		return page[dialogRow]{Items: rows, Page: p}, nil
	},
}

// await_condition bounds.
const (
	awaitDefaultSeconds = 10
	awaitMaxSeconds     = 60 // a call never holds a client longer (issue #3)
	awaitPoll           = 100 * time.Millisecond
	awaitMaxRows        = 10 // matching dialogs returned with the answer; list_dialogs pages the rest
	// awaitMaxCount: waiting is for a few dialogs (the next failed call,
	// ten INVITEs); a count this large is what list_dialogs' total
	// answers at once. How many the store can hold depends on the memory
	// budget (capture_status: sip_dialogs' max_items).
	awaitMaxCount = 100_000
)

type timeoutArg int

func (timeoutArg) argSchema() *jsonschema.Schema {
	return withDefault(intSchema(fmt.Sprintf("seconds to wait, 1 to %d (default %d)", awaitMaxSeconds, awaitDefaultSeconds), 1, awaitMaxSeconds), awaitDefaultSeconds)
}

type minCountArg int

func (minCountArg) argSchema() *jsonschema.Schema {
	return withDefault(intSchema(fmt.Sprintf("dialogs to match, 1 to %d (default 1)", awaitMaxCount), 1, awaitMaxCount), 1)
}

type awaitIn struct {
	Filter         filterArg   `json:"filter"`
	TimeoutSeconds timeoutArg  `json:"timeout_seconds,omitempty"`
	MinCount       minCountArg `json:"min_count,omitempty"`
	ChangedOnly    bool        `json:"changed_only,omitempty" jsonschema:"count only dialogs changed after the call starts"`
}

type awaitOut struct {
	Met            bool        `json:"met"`
	DeadlinePassed bool        `json:"deadline_passed"`
	CaptureEnded   bool        `json:"capture_ended" jsonschema:"unmet: every port read has ended"`
	WaitedMs       int64       `json:"waited_ms"`
	Matched        int         `json:"matched"`
	MinCount       int         `json:"min_count"`
	Dialogs        []dialogRow `json:"dialogs" jsonschema:"the first ten matches, oldest first"`
	Revision       uint64      `json:"revision" jsonschema:"the store revision the answer was read at"`
}

var awaitCondition = tool[awaitIn, awaitOut]{
	name:  "await_condition",
	reads: readsSIP,
	desc:  fmt.Sprintf("Wait until min_count dialogs match a filter, at most timeout_seconds (%d max); a passed deadline or ended capture answers met false.", awaitMaxSeconds),
	hints: readOnly(),
	text:  []textSource{textSIP},
	run: func(c *call, in awaitIn) (awaitOut, error) {
		e, err := in.Filter.compile()
		if err != nil {
			return awaitOut{}, err
		}
		want := count(int(in.MinCount), 1)
		if limit := c.d.SIP.Limits().Dialogs; want > limit {
			return awaitOut{}, argErr("min_count", "ask for fewer dialogs", "%d can never be met: the store keeps at most %d dialogs", want, limit)
		}
		secs := count(int(in.TimeoutSeconds), awaitDefaultSeconds)
		startRev := c.d.SIP.Revision()
		out := awaitOut{MinCount: want, Dialogs: []dialogRow{}}
		read := false
		passed, ended, waited := c.pollUntil(secs, c.portsEnded(coverage.Query{Families: readsSIP}), func() (bool, string) {
			if sn := c.d.SIP.Snapshot(); !read || sn.Revision != out.Revision {
				read = true
				out.Matched, out.Dialogs, out.Revision = 0, out.Dialogs[:0], sn.Revision
				for _, dl := range sn.Dialogs {
					if (in.ChangedOnly && dl.Rev <= startRev) || !e.Match(dl) {
						continue
					}
					out.Matched++
					if len(out.Dialogs) < awaitMaxRows {
						out.Dialogs = append(out.Dialogs, dialogRowOf(dl))
					}
				}
			}
			out.Met = out.Matched >= want
			return out.Met, fmt.Sprintf("%d of %d dialogs match", out.Matched, want)
		})
		out.WaitedMs, out.DeadlinePassed, out.CaptureEnded = waited.Milliseconds(), passed, ended
		if passed {
			c.warnf("deadline of %d s passed with %d of %d matching dialogs", secs, out.Matched, want)
		}
		if ended {
			c.warnf("every port read has ended with %d of %d matching dialogs: no more will come", out.Matched, want)
		}
		return out, nil
	},
}
