package mcp

import (
	"cmp"
	"context"
	"encoding/base64"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"fieldtap/services/sip"
)

const (
	toolTailDialogs    = "tail_dialogs"
	toolAwaitCondition = "await_condition"
)

// await_condition bounds.
const (
	awaitDefaultSeconds = 10
	awaitMaxSeconds     = 60 // issue #3: a call never holds a client longer
	awaitPoll           = 100 * time.Millisecond
	awaitMaxRows        = 10 // matching dialogs returned with the answer
)

type tailIn struct {
	Filter string `json:"filter,omitempty" jsonschema:"filter expression (docs/filter.md)"`
	Limit  int    `json:"limit,omitempty" jsonschema:"rows per call, default 50, at most 1000"`
	Cursor string `json:"cursor,omitempty" jsonschema:"next_cursor of the previous call; omit to get the most recently updated dialogs"`
	Projection
}

type awaitIn struct {
	Filter         string `json:"filter" jsonschema:"the condition: a filter expression (docs/filter.md)"`
	TimeoutSeconds int    `json:"timeout_seconds,omitempty" jsonschema:"how long to wait, default 10, at most 60"`
	MinCount       int    `json:"min_count,omitempty" jsonschema:"dialogs that must match, default 1"`
	ChangedOnly    bool   `json:"changed_only,omitempty" jsonschema:"count only dialogs that change after the call starts"`
}

type awaitOut struct {
	Met            bool        `json:"met"`
	DeadlinePassed bool        `json:"deadline_passed"`
	WaitedMs       int64       `json:"waited_ms"`
	Matched        int         `json:"matched"`
	MinCount       int         `json:"min_count"`
	Dialogs        []dialogRow `json:"dialogs"` // the first few matches
	Revision       uint64      `json:"revision"`
}

// tailKey orders dialogs by last update, then id, so equal times neither
// repeat nor vanish across calls.
type tailKey struct {
	updated int64
	id      uint64
}

func (k tailKey) cmp(o tailKey) int {
	if c := cmp.Compare(k.updated, o.updated); c != 0 {
		return c
	}
	return cmp.Compare(k.id, o.id)
}

func keyOf(d *sip.Dialog) tailKey { return tailKey{d.Updated.UnixNano(), d.ID} }

func tailCursor(src SourceInfo, k tailKey) string {
	return base64.RawURLEncoding.EncodeToString(fmt.Appendf(nil, "%s|t|%d|%d", src.CaptureIdentity, k.updated, k.id))
}

func tailParseCursor(src SourceInfo, c string) (tailKey, error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	p := strings.Split(string(b), "|")
	if err == nil && len(p) == 4 && p[0] == src.CaptureIdentity && p[1] == "t" {
		u, err1 := strconv.ParseInt(p[2], 10, 64)
		id, err2 := strconv.ParseUint(p[3], 10, 64)
		if err1 == nil && err2 == nil {
			return tailKey{u, id}, nil
		}
	}
	return tailKey{}, fmt.Errorf("cursor is not one tail_dialogs issued in this capture")
}

func sipLiveTools(d Deps) []server.ServerTool {
	return []server.ServerTool{
		{
			Tool: mcpgo.NewTool(toolTailDialogs,
				mcpgo.WithDescription("Dialogs by last update, oldest change first. Without a cursor: the most recently updated dialogs. With next_cursor: those updated since, so polling shows every change once per update (a dialog that changes again comes back). Update times are capture times."),
				inputSchema[tailIn](), readOnly(), listOutput[dialogRow]()),
			Handler: listHandler[tailIn, dialogRow](d, []string{"call_id", "updated"}, func(ctx context.Context, in tailIn) *mcpgo.CallToolResult {
				src := d.Source()
				sn, f := sipSnapshot(d)
				if f != nil {
					return f
				}
				limit, err := sipLimit(in.Limit, sipDefaultLimit, sipMaxLimit)
				if err != nil {
					return fail(src, CodeInvalidArgument, err.Error(), "use a smaller page and follow next_cursor")
				}
				e, f := compileFilter(d, in.Filter)
				if f != nil {
					return f
				}
				var after tailKey
				if in.Cursor != "" {
					if after, err = tailParseCursor(src, in.Cursor); err != nil {
						return fail(src, CodeInvalidArgument, err.Error(), "start again without a cursor")
					}
				}
				var hit []*sip.Dialog
				for _, dl := range sn.Dialogs {
					if (in.Cursor == "" || keyOf(dl).cmp(after) > 0) && e.Match(dl) {
						hit = append(hit, dl)
					}
				}
				slices.SortFunc(hit, func(a, b *sip.Dialog) int { return keyOf(a).cmp(keyOf(b)) })
				page := Page{TotalMatched: len(hit)}
				if in.Cursor == "" {
					hit = hit[max(len(hit)-limit, 0):] // the tail
				} else if len(hit) > limit {
					hit, page.Truncated = hit[:limit], true
				}
				rows := make([]dialogRow, len(hit))
				for i, dl := range hit {
					rows[i] = newDialogRow(dl)
				}
				page.Returned = len(rows)
				// Always a cursor: the caller polls from the last row seen.
				page.NextCursor = in.Cursor
				if len(hit) > 0 {
					page.NextCursor = tailCursor(src, keyOf(hit[len(hit)-1]))
				} else if in.Cursor == "" {
					page.NextCursor = tailCursor(src, tailKey{})
				}
				return list(src, rows, page)
			}),
		},
		{
			Tool: mcpgo.NewTool(toolAwaitCondition,
				mcpgo.WithDescription("Wait until at least min_count dialogs match a filter, at most timeout_seconds (≤ 60). Reaching the deadline is a successful answer with met false and deadline_passed true, not an error."),
				inputSchema[awaitIn](), readOnly(), outputSchema[awaitOut]()),
			Handler: handler(d, func(ctx context.Context, in awaitIn) *mcpgo.CallToolResult {
				src := d.Source()
				if d.SIP == nil {
					_, f := sipSnapshot(d)
					return f
				}
				secs := in.TimeoutSeconds
				if secs == 0 {
					secs = awaitDefaultSeconds
				}
				if secs < 1 || secs > awaitMaxSeconds {
					return fail(src, CodeInvalidArgument, fmt.Sprintf("timeout_seconds %d: want 1..%d", secs, awaitMaxSeconds), "call again to wait longer")
				}
				if in.MinCount == 0 {
					in.MinCount = 1
				}
				if in.MinCount < 0 {
					return fail(src, CodeInvalidArgument, "min_count must be positive", "omit it for 1")
				}
				e, f := compileFilter(d, in.Filter)
				if f != nil {
					return f
				}
				start := time.Now()
				deadline := start.Add(time.Duration(secs) * time.Second)
				startRev := d.SIP.Revision()
				var lastRev uint64
				out := awaitOut{MinCount: in.MinCount, Dialogs: []dialogRow{}}
				for {
					sn := d.SIP.Snapshot()
					if sn.Revision != lastRev || lastRev == 0 {
						lastRev = sn.Revision
						out.Matched, out.Dialogs = 0, out.Dialogs[:0]
						for _, dl := range sn.Dialogs {
							if (in.ChangedOnly && dl.Rev <= startRev) || !e.Match(dl) {
								continue
							}
							out.Matched++
							if len(out.Dialogs) < awaitMaxRows {
								out.Dialogs = append(out.Dialogs, newDialogRow(dl))
							}
						}
						out.Revision = sn.Revision
					}
					out.WaitedMs = time.Since(start).Milliseconds()
					if out.Matched >= in.MinCount {
						out.Met = true
						return ok(src, out)
					}
					wait := time.Until(deadline)
					if wait <= 0 {
						out.DeadlinePassed = true
						return ok(src, out, fmt.Sprintf("deadline of %d s passed with %d of %d matching dialogs", secs, out.Matched, in.MinCount))
					}
					select {
					case <-ctx.Done():
						return ok(src, out, "the request was cancelled before the condition was met")
					case <-time.After(min(wait, awaitPoll)):
					}
				}
			}),
		},
	}
}
