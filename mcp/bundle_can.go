package mcp

import (
	"context"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"fieldtap/drivers/wire"
	"fieldtap/services/canbus"
)

// Tool names in the can bundle.
const (
	toolCANBuses     = "can_buses"
	toolCANFrames    = "can_frames"
	toolCANIDs       = "can_ids"
	toolBusLoad      = "bus_load"
	toolExportCANLog = "export_canlog"
)

// Page sizes for CAN lists: a frame row is ~150 bytes of JSON, so the
// maximum page stays far below the 1 MiB response cap.
const (
	canDefaultLimit = 100
	canMaxLimit     = 1000
	// canExportMaxLines bounds one export_canlog answer (~45 bytes a line).
	canExportMaxLines = 10_000
)

// CodeNotFound is returned when a named port or item does not exist.
const codeCANNotFound = "NOT_FOUND"

type canPortArg struct {
	Port string `json:"port,omitempty" jsonschema:"CAN port name (from can_buses); empty means every port"`
}

type canBusesOut struct {
	Buses []canbus.Status `json:"buses"`
}

type canFramesIn struct {
	Port   string `json:"port,omitempty" jsonschema:"CAN port name; empty means the first port"`
	ID     string `json:"id,omitempty" jsonschema:"hex CAN id to match (with mask); 3 digits or fewer is 11-bit, more is 29-bit"`
	Mask   string `json:"mask,omitempty" jsonschema:"hex mask applied to id and frame id; default all bits"`
	Since  string `json:"since,omitempty" jsonschema:"RFC 3339 time; frames at or after"`
	Until  string `json:"until,omitempty" jsonschema:"RFC 3339 time; frames before"`
	Limit  int    `json:"limit,omitempty" jsonschema:"page size, 1..1000, default 100"`
	Cursor string `json:"cursor,omitempty" jsonschema:"next_cursor of the previous page"`
}

// canFramesListIn is can_frames' arguments: the selection plus fields.
type canFramesListIn struct {
	canFramesIn
	Projection
}

// canIDsIn is can_ids' arguments.
type canIDsIn struct {
	canPortArg
	Projection
}

type canFrameRow struct {
	Seq      uint64    `json:"seq"`
	Time     time.Time `json:"time"`
	ID       string    `json:"id"`
	Extended bool      `json:"extended"`
	Remote   bool      `json:"remote"`
	Error    bool      `json:"error"`
	DLC      int       `json:"dlc"`
	Data     string    `json:"data"`
}

type canIDRow struct {
	canbus.IDStats
	Rate *float64 `json:"rate_hz"` // null with fewer than two frames or no time span
}

type canBusLoadOut struct {
	Port    string          `json:"port"`
	Bitrate int             `json:"bitrate"`
	Method  string          `json:"method"`
	Seconds []canbus.Second `json:"seconds"`
}

type canExportOut struct {
	Port      string `json:"port"`
	Lines     int    `json:"lines"`
	Truncated bool   `json:"truncated"`
	Candump   string `json:"candump"`
}

// canFilter is a parsed can_frames/export_canlog selection.
type canFilter struct {
	id, mask     uint32
	haveID       bool
	since, until time.Time
}

func parseCANFilter(id, mask, since, until string) (canFilter, error) {
	var f canFilter
	if id != "" {
		v, err := strconv.ParseUint(id, 16, 32)
		if err != nil || v > wire.CANEFFMask {
			return f, fmt.Errorf("id %q is not a hex CAN id", id)
		}
		f.id, f.haveID = uint32(v), true
		if len(id) > 3 {
			f.id |= wire.CANEFF
		}
		f.mask = wire.CANEFFMask | wire.CANEFF
		if mask != "" {
			m, err := strconv.ParseUint(mask, 16, 32)
			if err != nil {
				return f, fmt.Errorf("mask %q is not hex", mask)
			}
			f.mask = uint32(m) | wire.CANEFF
		}
	} else if mask != "" {
		return f, fmt.Errorf("mask without id")
	}
	for _, p := range []struct {
		s   string
		dst *time.Time
	}{{since, &f.since}, {until, &f.until}} {
		if p.s == "" {
			continue
		}
		t, err := time.Parse(time.RFC3339Nano, p.s)
		if err != nil {
			return f, fmt.Errorf("time %q is not RFC 3339", p.s)
		}
		*p.dst = t
	}
	return f, nil
}

func (f canFilter) match(r *canbus.Record) bool {
	if f.haveID && (r.ID&^wire.CANRTR)&f.mask != f.id&f.mask {
		return false
	}
	if !f.since.IsZero() && r.Time.Before(f.since) {
		return false
	}
	if !f.until.IsZero() && !r.Time.Before(f.until) {
		return false
	}
	return true
}

// canPageArgs checks what every paged frame tool takes besides its filter:
// the port, the page size and the cursor.
func canPageArgs(d Deps, port string, limit int, cursor string) (*canbus.Port, int, uint64, *mcpgo.CallToolResult) {
	src := d.Source()
	p, bad := canPort(d, port)
	if bad != nil {
		return nil, 0, 0, bad
	}
	n, err := canLimit(limit)
	if err != nil {
		return nil, 0, 0, fail(src, CodeInvalidArgument, err.Error(), "use a smaller page and follow next_cursor")
	}
	from, err := canParseCursor(src, cursor)
	if err != nil {
		return nil, 0, 0, fail(src, CodeInvalidArgument, err.Error(), "start again without a cursor")
	}
	return p, n, from, nil
}

// canCursor is opaque to clients: the ring sequence number of the next
// row plus the capture identity, so a cursor from another run is refused.
func canCursor(src SourceInfo, seq uint64) string {
	return base64.RawURLEncoding.EncodeToString([]byte(src.CaptureIdentity + "|" + strconv.FormatUint(seq, 10)))
}

func canParseCursor(src SourceInfo, c string) (uint64, error) {
	if c == "" {
		return 0, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(c)
	ident, seq, ok := strings.Cut(string(b), "|")
	if err != nil || !ok || ident != src.CaptureIdentity {
		return 0, fmt.Errorf("cursor is not one this capture issued")
	}
	return strconv.ParseUint(seq, 10, 64)
}

func canLimit(n int) (int, error) {
	switch {
	case n == 0:
		return canDefaultLimit, nil
	case n < 0 || n > canMaxLimit:
		return 0, fmt.Errorf("limit %d: want 1..%d", n, canMaxLimit)
	}
	return n, nil
}

// canPort resolves a port argument; empty means the first port.
func canPort(d Deps, name string) (*canbus.Port, *mcpgo.CallToolResult) {
	if d.CAN == nil {
		return nil, fail(d.Source(), codeCANNotFound, "this box has no CAN store", "check capture_status for CAN ports")
	}
	if name == "" {
		ps := d.CAN.Ports()
		if len(ps) == 0 {
			return nil, fail(d.Source(), codeCANNotFound, "no CAN port has carried a frame yet", "wait for traffic, or check capture_status")
		}
		return ps[0], nil
	}
	p := d.CAN.Lookup(name)
	if p == nil {
		return nil, fail(d.Source(), codeCANNotFound, fmt.Sprintf("no CAN port %q", name), "call can_buses for the port names")
	}
	return p, nil
}

func canTools(d Deps) []server.ServerTool {
	return []server.ServerTool{
		{
			Tool: mcpgo.NewTool(toolCANBuses,
				mcpgo.WithDescription("Every CAN port: bitrate used for load, frames (standard, extended, remote, error), distinct ids, mean and 1-second peak bus load, first/last frame time, and its frame store."),
				readOnly(), outputSchema[canBusesOut]()),
			Handler: handler(d, func(ctx context.Context, _ noArgs) *mcpgo.CallToolResult {
				out := canBusesOut{Buses: []canbus.Status{}}
				if d.CAN != nil {
					for _, p := range d.CAN.Ports() {
						out.Buses = append(out.Buses, p.Status())
					}
				}
				return ok(d.Source(), out)
			}),
		},
		{
			Tool: mcpgo.NewTool(toolCANFrames,
				mcpgo.WithDescription("Raw CAN frames of one port, oldest first, filtered by id/mask and time range; paged with an opaque cursor."),
				inputSchema[canFramesListIn](), readOnly(), listOutput[canFrameRow]()),
			Handler: listHandler[canFramesListIn, canFrameRow](d, []string{"seq"}, func(ctx context.Context, in canFramesListIn) *mcpgo.CallToolResult {
				src := d.Source()
				p, limit, from, bad := canPageArgs(d, in.Port, in.Limit, in.Cursor)
				if bad != nil {
					return bad
				}
				f, err := parseCANFilter(in.ID, in.Mask, in.Since, in.Until)
				if err != nil {
					return fail(src, CodeInvalidArgument, err.Error(), "ids and masks are hex, times RFC 3339")
				}
				snap := p.Frames()
				rows, page := seqPage(src, snap, from, limit, func(r canbus.Record) bool { return f.match(&r) },
					func(seq uint64, r canbus.Record) canFrameRow {
						return canFrameRow{Seq: seq, Time: r.Time, ID: wire.FormatCANID(r.ID), Extended: r.ID&wire.CANEFF != 0,
							Remote: r.ID&wire.CANRTR != 0, Error: r.ID&wire.CANERR != 0, DLC: int(r.Len), Data: fmt.Sprintf("%X", r.Payload())}
					})
				var warn []string
				if from > 0 && from < snap.FirstSeq() {
					warn = append(warn, "frames between the cursor and the oldest stored frame were evicted by the store's bounds")
				}
				return list(src, rows, page, warn...)
			}),
		},
		{
			Tool: mcpgo.NewTool(toolCANIDs,
				mcpgo.WithDescription("The ID table of one port: per CAN id the count, rate, first/last time, last data, DLCs seen, and which bytes and bits have changed."),
				inputSchema[canIDsIn](), readOnly(), listOutput[canIDRow]()),
			Handler: listHandler[canIDsIn, canIDRow](d, []string{"id"}, func(ctx context.Context, in canIDsIn) *mcpgo.CallToolResult {
				p, bad := canPort(d, in.Port)
				if bad != nil {
					return bad
				}
				rows := []canIDRow{}
				for _, s := range p.IDs() {
					rows = append(rows, canIDRow{IDStats: s, Rate: s.Rate()})
				}
				st := p.Status()
				var warn []string
				if st.IDOverflow > 0 {
					warn = append(warn, fmt.Sprintf("%d frames carried ids beyond the table's %d-id bound and are not listed", st.IDOverflow, canbus.MaxIDs))
				}
				return list(d.Source(), rows, Page{Returned: len(rows), TotalMatched: len(rows)}, warn...)
			}),
		},
		{
			Tool: mcpgo.NewTool(toolBusLoad,
				mcpgo.WithDescription("Bus load per second of one port: frames, bits on the wire (worst-case stuffing estimate) and load = bits / bitrate."),
				inputSchema[canPortArg](), readOnly(), outputSchema[canBusLoadOut]()),
			Handler: handler(d, func(ctx context.Context, in canPortArg) *mcpgo.CallToolResult {
				p, bad := canPort(d, in.Port)
				if bad != nil {
					return bad
				}
				st := p.Status()
				return ok(d.Source(), canBusLoadOut{Port: p.Name(), Bitrate: st.Bitrate, Seconds: p.Seconds(),
					Method: "bits per frame = g+8n+13+floor((g+8n-1)/4), g=34 (11-bit) or 54 (29-bit): worst-case stuffing, Davis et al. 2007"})
			}),
		},
		{
			Tool: mcpgo.NewTool(toolExportCANLog,
				mcpgo.WithDescription("The stored frames of one port as candump -l text, filtered by id/mask and time range; at most 10000 lines, and says when it cut."),
				inputSchema[canFramesIn](), readOnly(), outputSchema[canExportOut]()),
			Handler: handler(d, func(ctx context.Context, in canFramesIn) *mcpgo.CallToolResult {
				src := d.Source()
				p, bad := canPort(d, in.Port)
				if bad != nil {
					return bad
				}
				if in.Cursor != "" || in.Limit != 0 {
					return fail(src, CodeInvalidArgument, "export_canlog takes no cursor or limit", "narrow the window with since/until instead")
				}
				f, err := parseCANFilter(in.ID, in.Mask, in.Since, in.Until)
				if err != nil {
					return fail(src, CodeInvalidArgument, err.Error(), "ids and masks are hex, times RFC 3339")
				}
				out := canExportOut{Port: p.Name()}
				var buf []byte
				p.Frames().Range(0, func(_ uint64, r canbus.Record) bool {
					if !f.match(&r) {
						return true
					}
					if out.Lines == canExportMaxLines {
						out.Truncated = true
						return false
					}
					buf = wire.AppendCandump(buf, r.Time, p.Name(), r.ID, r.Payload())
					out.Lines++
					return true
				})
				out.Candump = string(buf)
				var warn []string
				if out.Truncated {
					warn = append(warn, fmt.Sprintf("cut at %d lines: narrow since/until to export the rest", canExportMaxLines))
				}
				return ok(src, out, warn...)
			}),
		},
	}
}
