package mcp

import (
	"cmp"
	"context"
	"encoding/base64"
	"slices"
	"strconv"
	"strings"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"fieldtap/services/j1587"
)

// Tool names in the j1708 bundle.
const (
	toolJ1708Messages   = "j1708_messages"
	toolJ1587Summary    = "j1587_summary"
	toolJ1587Parameters = "j1587_parameters"
	toolJ1587Faults     = "j1587_faults"
	toolExportJ1708Log  = "export_j1708log"
)

// Bounds of j1708 answers. A message row is ~200 bytes of JSON, a log
// line ~50 bytes, so both maxima stay well below the 1 MiB response cap.
const (
	j1708MaxMID          = 255
	j1708MaxPID          = j1587.MaxPID - 1
	j1708ExportDefault   = 2000
	j1708ExportMaxLines  = 10_000
	j1708ExportMaxBytes  = 512 << 10
	codeJ1708NoStore     = "NO_J1708_PORT"
	codeJ1708StaleCursor = "STALE_CURSOR"
)

type j1708MessagesIn struct {
	MID    int    `json:"mid,omitempty" jsonschema:"MID to match, 1..255; 0 or omitted matches every MID"`
	PID    int    `json:"pid,omitempty" jsonschema:"J1587 PID the message must carry, 1..511 (page 2 is 256+x); 0 or omitted matches every message"`
	Limit  int    `json:"limit,omitempty" jsonschema:"page size, 1..1000, default 100"`
	Cursor string `json:"cursor,omitempty" jsonschema:"next_cursor of the previous page"`
	Projection
}

type j1587ParametersIn struct {
	MID int `json:"mid,omitempty" jsonschema:"only this MID, 1..255; 0 or omitted means every MID"`
}

type j1708ExportIn struct {
	MaxMessages int `json:"max_messages,omitempty" jsonschema:"newest messages to export, 1..10000, default 2000"`
}

type j1587ParametersOut struct {
	Parameters []j1587ParamRow `json:"parameters"`
	Population string          `json:"population"`
}

// j1587ParamRow fences a parameter's sender text (VIN, component id); the
// outer Text shadows the store's in JSON.
type j1587ParamRow struct {
	j1587.ParamValue
	Text string `json:"text,omitempty" untrusted:"field"`
}

type j1587FaultsOut struct {
	Faults []j1587.FaultEntry `json:"faults"`
	// FaultTables lists, per MID, when it last sent PID 194: no faults
	// with tables seen means the senders report no codes.
	FaultTables []j1587FaultTable `json:"fault_tables"`
}

type j1587FaultTable struct {
	MID  int       `json:"mid"`
	Time time.Time `json:"time"`
}

type j1708ExportOut struct {
	Format    string `json:"format"`
	Messages  int    `json:"messages"`
	LeftOut   int    `json:"left_out"` // stored messages not in this export
	Truncated bool   `json:"truncated"`
	Log       string `json:"log"`
}

func j1708Tools(d Deps) []server.ServerTool {
	return []server.ServerTool{
		{
			Tool: mcpgo.NewTool(toolJ1708Messages,
				mcpgo.WithDescription("Raw J1708/J2497 messages, newest first: time, MID, hex bytes with checksum, status (ok, bad_checksum, …) and the J1587 PIDs each carries. Filter by mid and pid; page with cursor."),
				inputSchema[j1708MessagesIn](),
				readOnly(),
				listOutput[j1587.MessageItem](),
			),
			Handler: listHandler[j1708MessagesIn, j1587.MessageItem](d, []string{"seq"}, func(ctx context.Context, in j1708MessagesIn) *mcpgo.CallToolResult {
				src := d.Source()
				if d.J1587 == nil {
					return j1708NoStore(src)
				}
				if in.MID < 0 || in.MID > j1708MaxMID || in.PID < 0 || in.PID > j1708MaxPID || in.Limit < 0 || in.Limit > j1587.MaxPageSize {
					return fail(src, CodeInvalidArgument, "mid must be 0..255, pid 0..511, limit 0..1000", "omit a filter to match everything")
				}
				q := j1587.MessageQuery{MID: j1587.Any, PID: j1587.Any, Limit: in.Limit}
				if in.MID > 0 {
					q.MID = in.MID
				}
				if in.PID > 0 {
					q.PID = in.PID
				}
				if in.Cursor != "" {
					seq, ok := j1708ParseCursor(d.J1587, src, in.Cursor)
					if !ok {
						return fail(src, codeJ1708StaleCursor, "cursor is not from this capture or its message left the ring", "start again without a cursor")
					}
					q.Before, q.HasBefore = seq, true
				}
				p := d.J1587.Messages(q)
				page := Page{Returned: len(p.Items), TotalMatched: p.TotalMatched, Truncated: p.More}
				if p.More {
					last := p.Items[len(p.Items)-1]
					page.NextCursor = j1708Cursor(src, last.Time, last.Seq)
				}
				return list(src, p.Items, page)
			}),
		},
		{
			Tool: mcpgo.NewTool(toolJ1587Summary,
				mcpgo.WithDescription("J1708/J1587 bus overview: messages, valid and bad checksums, decode errors by status, J2497 count, and per MID (with its J1587 name) messages, checksum errors, rate with its basis, PIDs seen, active faults; plus the message ring's fill and evictions and any table overflow."),
				readOnly(),
				outputSchema[j1587.Summary](),
			),
			Handler: handler(d, func(ctx context.Context, _ noArgs) *mcpgo.CallToolResult {
				src := d.Source()
				if d.J1587 == nil {
					return j1708NoStore(src)
				}
				return ok(src, d.J1587.Summary())
			}),
		},
		{
			Tool: mcpgo.NewTool(toolJ1587Parameters,
				mcpgo.WithDescription("Latest value per (MID, PID) with name, unit (US units), status (ok, not_available, short, no_number), raw hex, time, how many messages carried it, and min/max over the numeric values seen. Text values (VIN, component id) are untrusted sender text."),
				inputSchema[j1587ParametersIn](),
				readOnly(),
				outputSchema[j1587ParametersOut](),
			),
			Handler: handler(d, func(ctx context.Context, in j1587ParametersIn) *mcpgo.CallToolResult {
				src := d.Source()
				if d.J1587 == nil {
					return j1708NoStore(src)
				}
				if in.MID < 0 || in.MID > j1708MaxMID {
					return fail(src, CodeInvalidArgument, "mid must be 0..255", "omit mid for every MID")
				}
				mid := j1587.Any
				if in.MID > 0 {
					mid = in.MID
				}
				ps := d.J1587.Parameters(mid)
				rows := make([]j1587ParamRow, len(ps))
				for i, p := range ps {
					rows[i] = j1587ParamRow{ParamValue: p, Text: p.Text}
				}
				return ok(src, j1587ParametersOut{Parameters: rows, Population: strconv.Itoa(len(ps)) + " (MID, PID) pairs from checksum-valid J1587 messages"})
			}),
		},
		{
			Tool: mcpgo.NewTool(toolJ1587Faults,
				mcpgo.WithDescription("Diagnostic codes from PID 194 tables: MID, SID or PID code, FMI, active (listed as active in the MID's latest table), listed, occurrence count, first/last seen; and when each MID last sent a table, so 'no faults' is told apart from 'no data'."),
				readOnly(),
				outputSchema[j1587FaultsOut](),
			),
			Handler: handler(d, func(ctx context.Context, _ noArgs) *mcpgo.CallToolResult {
				src := d.Source()
				if d.J1587 == nil {
					return j1708NoStore(src)
				}
				out := j1587FaultsOut{Faults: d.J1587.Faults(), FaultTables: []j1587FaultTable{}}
				for mid, t := range d.J1587.FaultTables() {
					out.FaultTables = append(out.FaultTables, j1587FaultTable{MID: mid, Time: t})
				}
				sortFaultTables(out.FaultTables)
				var warnings []string
				if len(out.FaultTables) == 0 {
					warnings = append(warnings, "no MID has sent a PID 194 table yet: absence of faults is not known")
				}
				return ok(src, out, warnings...)
			}),
		},
		{
			Tool: mcpgo.NewTool(toolExportJ1708Log,
				mcpgo.WithDescription("The newest stored messages, oldest first, as a J1708 text log ((seconds) j1708 HEX, j2497 for trailer messages) that fieldtapd --source reads back."),
				inputSchema[j1708ExportIn](),
				readOnly(),
				outputSchema[j1708ExportOut](),
			),
			Handler: handler(d, func(ctx context.Context, in j1708ExportIn) *mcpgo.CallToolResult {
				src := d.Source()
				if d.J1587 == nil {
					return j1708NoStore(src)
				}
				if in.MaxMessages < 0 || in.MaxMessages > j1708ExportMaxLines {
					return fail(src, CodeInvalidArgument, "max_messages must be 1..10000", "page older traffic with j1708_messages")
				}
				n := in.MaxMessages
				if n == 0 {
					n = j1708ExportDefault
				}
				text, written, left := d.J1587.Export(nil, n, j1708ExportMaxBytes)
				out := j1708ExportOut{Format: "j1708log", Messages: written, LeftOut: left, Truncated: written < n && left > 0, Log: string(text)}
				var warnings []string
				if out.Truncated {
					warnings = append(warnings, "export cut at "+strconv.Itoa(j1708ExportMaxBytes)+" bytes: ask for fewer max_messages")
				}
				return ok(src, out, warnings...)
			}),
		},
	}
}

func j1708NoStore(src SourceInfo) *mcpgo.CallToolResult {
	return fail(src, codeJ1708NoStore, "this box has no J1708 store", "check capture_status for a j1708 port")
}

// j1708Cursor is opaque to clients: capture identity, the message's time
// and its ring sequence number, so a cursor from another run, or one whose
// message has left the ring, is refused rather than silently skipping.
func j1708Cursor(src SourceInfo, t time.Time, seq uint64) string {
	return base64.RawURLEncoding.EncodeToString([]byte(src.CaptureIdentity + "|" + strconv.FormatInt(t.UnixNano(), 10) + "|" + strconv.FormatUint(seq, 10)))
}

func j1708ParseCursor(s *j1587.Store, src SourceInfo, c string) (uint64, bool) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return 0, false
	}
	parts := strings.Split(string(b), "|")
	if len(parts) != 3 || parts[0] != src.CaptureIdentity {
		return 0, false
	}
	ns, err1 := strconv.ParseInt(parts[1], 10, 64)
	seq, err2 := strconv.ParseUint(parts[2], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	r, ok := s.Get(seq)
	if !ok || r.Time.UnixNano() != ns {
		return 0, false
	}
	return seq, true
}

func sortFaultTables(ts []j1587FaultTable) {
	slices.SortFunc(ts, func(a, b j1587FaultTable) int { return cmp.Compare(a.MID, b.MID) })
}
