package mcp

import (
	"context"
	"fmt"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"fieldtap/services/j1939"
)

// Tool names in the j1939 bundle.
const (
	toolJ1939Summary    = "j1939_summary"
	toolJ1939Inventory  = "j1939_inventory"
	toolJ1939Faults     = "j1939_faults"
	toolJ1939PGN        = "j1939_pgn"
	toolJ1939SPN        = "j1939_spn"
	toolJ1939TPSessions = "j1939_tp_sessions"
	toolJ1939Requests   = "j1939_requests"
)

// j1939IdentPGNs carry text (VIN, component and software id): their
// payload gets a fenced printable view beside the raw hex.
var j1939IdentPGNs = map[uint32]bool{j1939.PGNVIN: true, j1939.PGNComponentID: true, j1939.PGNSoftwareID: true}

type j1939SummaryOut struct {
	Ports []j1939.PortSummary `json:"ports"`
}

type j1939PGNIn struct {
	PGN uint32 `json:"pgn" jsonschema:"PGN number, decimal (e.g. 61444 for EEC1, 65260 for VIN)"`
	SA  *int   `json:"sa,omitempty" jsonschema:"only this source address (0..255)"`
}

type j1939PGNRow struct {
	j1939.PGNValue
	Text *string `json:"text" untrusted:"field"` // printable view for VIN/CI/SOFT, fenced by ok(); else null
}

type j1939PGNOut struct {
	PGN     uint32        `json:"pgn"`
	Name    string        `json:"name"`
	Sources []j1939PGNRow `json:"sources"`
}

type j1939SPNIn struct {
	SPN    uint32 `json:"spn" jsonschema:"SPN number from the curated set (see docs/j1939.md), e.g. 190 engine speed"`
	SA     *int   `json:"sa,omitempty" jsonschema:"only this source address (0..255)"`
	Port   string `json:"port,omitempty" jsonschema:"only this port"`
	Limit  int    `json:"limit,omitempty" jsonschema:"page size, 1..1000, default 100"`
	Cursor string `json:"cursor,omitempty" jsonschema:"next_cursor of the previous page"`
	Projection
}

type j1939SPNRow struct {
	Seq    uint64    `json:"seq"`
	Port   string    `json:"port"`
	Time   time.Time `json:"time"`
	SA     int       `json:"sa"`
	Value  *float64  `json:"value"` // null unless status is ok
	Unit   string    `json:"unit"`
	Status string    `json:"status"`
	Raw    uint32    `json:"raw"`
}

type j1939TPIn struct {
	Status string `json:"status,omitempty" jsonschema:"only sessions with this status: complete, aborted, timed_out, superseded, refused, open"`
	Limit  int    `json:"limit,omitempty" jsonschema:"page size, 1..1000, default 100"`
	Cursor string `json:"cursor,omitempty" jsonschema:"next_cursor of the previous page"`
	Projection
}

type j1939TPRow struct {
	Seq         *uint64   `json:"seq"` // null for a session still open
	Port        string    `json:"port"`
	Kind        string    `json:"kind"`
	Status      string    `json:"status"`
	SA          int       `json:"sa"`
	DA          int       `json:"da"`
	PGN         uint32    `json:"pgn"`
	PGNName     string    `json:"pgn_name"`
	Size        int       `json:"size"`
	Packets     int       `json:"packets"`
	Received    int       `json:"received"`
	AbortReason *int      `json:"abort_reason"`
	Start       time.Time `json:"start"`
	End         time.Time `json:"end"`
}

type j1939RequestsOut struct {
	Ports []j1939.PortRequests `json:"ports"`
}

func j1939Store(d Deps) (*j1939.Store, *mcpgo.CallToolResult) {
	if d.J1939 == nil {
		return nil, fail(d.Source(), codeCANNotFound, "this box has no J1939 store", "check capture_status for CAN ports")
	}
	return d.J1939, nil
}

func j1939SA(sa *int) (int, error) {
	if sa == nil {
		return -1, nil
	}
	if *sa < 0 || *sa > 255 {
		return 0, fmt.Errorf("sa %d: want 0..255", *sa)
	}
	return *sa, nil
}

func j1939TPRowOf(seq *uint64, r j1939.SessionRecord) j1939TPRow {
	row := j1939TPRow{Seq: seq, Port: r.Port, Kind: r.Kind.String(), Status: r.Status.String(), SA: int(r.SA), DA: int(r.DA),
		PGN: r.PGN, PGNName: j1939.PGNName(r.PGN), Size: r.Size, Packets: r.Packets, Received: r.Received, Start: r.Start, End: r.End}
	if r.Status == j1939.TPAborted {
		a := int(r.AbortReason)
		row.AbortReason = &a
	}
	return row
}

func j1939Tools(d Deps) []server.ServerTool {
	return []server.ServerTool{
		{
			Tool: mcpgo.NewTool(toolJ1939Summary,
				mcpgo.WithDescription("J1939 overview per CAN port: frames, source addresses, top PGNs, TP.CM counts and session outcomes, requests, address claims and conflicts, DM1 sources and active DTC count. Start here on a truck bus."),
				readOnly(), outputSchema[j1939SummaryOut]()),
			Handler: handler(d, func(ctx context.Context, _ noArgs) *mcpgo.CallToolResult {
				s, bad := j1939Store(d)
				if bad != nil {
					return bad
				}
				return ok(d.Source(), j1939SummaryOut{Ports: s.Summary()})
			}),
		},
		{
			Tool: mcpgo.NewTool(toolJ1939Inventory,
				mcpgo.WithDescription("ECUs per port from address claims and traffic: SA, first/last seen, frames, decoded NAME (identity, manufacturer, function, industry group, instances, arbitrary-address capable), claim conflicts, DM1 lamps."),
				inputSchema[fieldsOnly](), readOnly(), listOutput[j1939.InventoryRow]()),
			Handler: listHandler[fieldsOnly, j1939.InventoryRow](d, []string{"port", "sa"}, func(ctx context.Context, _ fieldsOnly) *mcpgo.CallToolResult {
				s, bad := j1939Store(d)
				if bad != nil {
					return bad
				}
				rows := s.Inventory()
				return list(d.Source(), rows, Page{Returned: len(rows), TotalMatched: len(rows)})
			}),
		},
		{
			Tool: mcpgo.NewTool(toolJ1939Faults,
				mcpgo.WithDescription("Latest DM1 (active) and DM2 (previously active) per source: lamps (MIL, red stop, amber warning, protect: 0 off, 1 on, 2 error, 3 not available) and DTCs with spn, fmi, oc, cm in the SAE J1939-73 layout. no_active marks the SPN 0/FMI 0 'no fault' entry."),
				inputSchema[fieldsOnly](), readOnly(), listOutput[j1939.Fault]()),
			Handler: listHandler[fieldsOnly, j1939.Fault](d, []string{"port", "sa", "kind"}, func(ctx context.Context, _ fieldsOnly) *mcpgo.CallToolResult {
				s, bad := j1939Store(d)
				if bad != nil {
					return bad
				}
				rows := s.Faults()
				return list(d.Source(), rows, Page{Returned: len(rows), TotalMatched: len(rows)})
			}),
		},
		{
			Tool: mcpgo.NewTool(toolJ1939PGN,
				mcpgo.WithDescription("Latest payload of one PGN per source, with curated SPNs decoded (value, unit, status). VIN/component/software id payloads also get a fenced printable view; the hex is the truth."),
				inputSchema[j1939PGNIn](), readOnly(), outputSchema[j1939PGNOut]()),
			Handler: handler(d, func(ctx context.Context, in j1939PGNIn) *mcpgo.CallToolResult {
				s, bad := j1939Store(d)
				if bad != nil {
					return bad
				}
				sa, err := j1939SA(in.SA)
				if err != nil {
					return fail(d.Source(), CodeInvalidArgument, err.Error(), "omit sa for every source")
				}
				out := j1939PGNOut{PGN: in.PGN, Name: j1939.PGNName(in.PGN), Sources: []j1939PGNRow{}}
				for _, v := range s.LatestPGN(in.PGN) {
					if sa >= 0 && v.SA != sa {
						continue
					}
					row := j1939PGNRow{PGNValue: v}
					if j1939IdentPGNs[in.PGN] {
						txt := printableASCII(v.Raw)
						row.Text = &txt
					}
					out.Sources = append(out.Sources, row)
				}
				return ok(d.Source(), out)
			}),
		},
		{
			Tool: mcpgo.NewTool(toolJ1939SPN,
				mcpgo.WithDescription("Time series of one curated SPN (e.g. 190 engine speed, 84 wheel speed, 110 coolant temperature), oldest first, paged; value is null unless status is ok."),
				inputSchema[j1939SPNIn](), readOnly(), listOutput[j1939SPNRow]()),
			Handler: listHandler[j1939SPNIn, j1939SPNRow](d, []string{"seq"}, func(ctx context.Context, in j1939SPNIn) *mcpgo.CallToolResult {
				src := d.Source()
				s, bad := j1939Store(d)
				if bad != nil {
					return bad
				}
				if _, known := j1939.LookupSPN(in.SPN); !known {
					return fail(src, CodeInvalidArgument, fmt.Sprintf("SPN %d is not in the curated set", in.SPN), "see docs/j1939.md for the list, or read raw payloads with j1939_pgn")
				}
				sa, err := j1939SA(in.SA)
				if err != nil {
					return fail(src, CodeInvalidArgument, err.Error(), "omit sa for every source")
				}
				limit, err := canLimit(in.Limit)
				if err != nil {
					return fail(src, CodeInvalidArgument, err.Error(), "use a smaller page and follow next_cursor")
				}
				from, err := canParseCursor(src, in.Cursor)
				if err != nil {
					return fail(src, CodeInvalidArgument, err.Error(), "start again without a cursor")
				}
				keep := func(v j1939.Sample) bool {
					return v.Value.SPN == in.SPN && (sa < 0 || int(v.SA) == sa) && (in.Port == "" || v.Port == in.Port)
				}
				rows, page := seqPage(src, s.Samples(), from, limit, keep, func(seq uint64, v j1939.Sample) j1939SPNRow {
					row := j1939SPNRow{Seq: seq, Port: v.Port, Time: v.Time, SA: int(v.SA), Unit: v.Value.Unit, Status: v.Value.Status, Raw: v.Value.Raw}
					if v.Value.Status == j1939.StatusOK {
						x := v.Value.Value
						row.Value = &x
					}
					return row
				})
				return list(src, rows, page)
			}),
		},
		{
			Tool: mcpgo.NewTool(toolJ1939TPSessions,
				mcpgo.WithDescription("Transport-protocol sessions (BAM and RTS/CTS), ended ones oldest first then those still open: SA, DA, transferred PGN, size, packets announced and received, status (complete, aborted with reason, timed_out per J1939-21, superseded, refused by the session bound, open). Paged."),
				inputSchema[j1939TPIn](), readOnly(), listOutput[j1939TPRow]()),
			Handler: listHandler[j1939TPIn, j1939TPRow](d, []string{"seq", "port", "sa", "pgn"}, func(ctx context.Context, in j1939TPIn) *mcpgo.CallToolResult {
				src := d.Source()
				s, bad := j1939Store(d)
				if bad != nil {
					return bad
				}
				switch in.Status {
				case "", "complete", "aborted", "timed_out", "superseded", "refused", "open":
				default:
					return fail(src, CodeInvalidArgument, fmt.Sprintf("status %q is unknown", in.Status), "use complete, aborted, timed_out, superseded, refused or open")
				}
				limit, err := canLimit(in.Limit)
				if err != nil {
					return fail(src, CodeInvalidArgument, err.Error(), "use a smaller page and follow next_cursor")
				}
				from, err := canParseCursor(src, in.Cursor)
				if err != nil {
					return fail(src, CodeInvalidArgument, err.Error(), "start again without a cursor")
				}
				snap := s.Sessions()
				rows := []j1939TPRow{}
				matched, next := 0, ""
				add := func(seq uint64, r j1939.SessionRecord, open bool) {
					if in.Status != "" && r.Status.String() != in.Status {
						return
					}
					matched++
					if seq < from {
						return
					}
					if len(rows) == limit {
						if next == "" {
							next = canCursor(src, seq)
						}
						return
					}
					var sp *uint64
					if !open {
						sq := seq
						sp = &sq
					}
					rows = append(rows, j1939TPRowOf(sp, r))
				}
				snap.Range(0, func(seq uint64, r j1939.SessionRecord) bool { add(seq, r, false); return true })
				// Open sessions follow the ended ones in cursor order.
				for i, r := range s.OpenSessions() {
					add(snap.EndSeq()+uint64(i), r, true)
				}
				return list(src, rows, Page{Returned: len(rows), TotalMatched: matched, Truncated: next != "", NextCursor: next})
			}),
		},
		{
			Tool: mcpgo.NewTool(toolJ1939Requests,
				mcpgo.WithDescription("Requests (PGN 59904) per port: the total count and each requested PGN with its count, most requested first."),
				readOnly(), outputSchema[j1939RequestsOut]()),
			Handler: handler(d, func(ctx context.Context, _ noArgs) *mcpgo.CallToolResult {
				s, bad := j1939Store(d)
				if bad != nil {
					return bad
				}
				return ok(d.Source(), j1939RequestsOut{Ports: s.Requests()})
			}),
		},
	}
}
