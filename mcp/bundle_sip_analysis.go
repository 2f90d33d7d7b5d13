package mcp

import (
	"context"
	"fmt"
	"slices"
	"strings"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"fieldtap/services/netdecode"
	"fieldtap/services/sip"
)

type aggregateIn struct {
	Dimension string `json:"dimension" jsonschema:"one of method (first method), state, final_code, from_user, to_user, src_ip, dst_ip, user_agent (first seen), transport"`
	Filter    string `json:"filter,omitempty" jsonschema:"filter expression applied first (docs/filter.md)"`
	Limit     int    `json:"limit,omitempty" jsonschema:"most buckets, largest first; default 20, at most 1000"`
}

type bucket struct {
	Value string `json:"value" untrusted:"true"` // sender text for user_agent; "(none)" when absent
	Count int    `json:"count"`
}

type aggregateOut struct {
	Dimension    string   `json:"dimension"`
	Buckets      []bucket `json:"buckets"`
	OtherCount   int      `json:"other_count"`   // dialogs in buckets past limit
	TotalMatched int      `json:"total_matched"` // = sum(buckets) + other_count
}

type findProblemsIn struct {
	Problems []string `json:"problems,omitempty" jsonschema:"aliases to look for (failed, slow-setup, short-calls, retransmits, no-ack, auth-loop); default all"`
	Filter   string   `json:"filter,omitempty" jsonschema:"filter ANDed with the aliases, e.g. first_method == INVITE"`
	Limit    int      `json:"limit,omitempty" jsonschema:"rows per page, default 50, at most 1000"`
	Cursor   string   `json:"cursor,omitempty" jsonschema:"next_cursor of the previous page"`
	Projection
}

// problemRow is a dialog row with the aliases it matched.
type problemRow struct {
	Problems []string `json:"problems"`
	dialogRow
}

type triageIn struct {
	CallID string `json:"call_id" jsonschema:"the Call-ID"`
}

type triageOut struct {
	CallID     string   `json:"call_id"`
	Outcome    string   `json:"outcome"` // answered, ended, failed, cancelled, unanswered, in_progress, not_a_call
	FinalCode  *int     `json:"final_code"`
	Cause      string   `json:"cause" untrusted:"true"` // from the Reason header, else the status
	CauseFrom  string   `json:"cause_from"`             // reason_header, status, none
	PDDms      *float64 `json:"pdd_ms"`
	SetupMs    *float64 `json:"setup_ms"`
	DurationMs *float64 `json:"duration_ms"`
	Problems   []string `json:"problems"`
	Hints      []string `json:"hints"`
}

type reportOut struct {
	Store   sip.Stats        `json:"store"`
	Limits  sip.Limits       `json:"limits"`
	Streams *sip.StreamStats `json:"streams"` // null when no analyser reports
	Decode  *netdecode.Stats `json:"decode"`
	States  map[string]int   `json:"dialogs_by_state"`
	Notes   []string         `json:"notes"`
}

func sipAnalysisTools(d Deps) []server.ServerTool {
	problems := sip.CompiledProblems()
	return []server.ServerTool{
		{
			Tool: mcpgo.NewTool(toolAggregateDialogs,
				mcpgo.WithDescription("Count dialogs by one dimension (each dialog in exactly one bucket): buckets largest first, plus other_count; buckets + other_count = total_matched."),
				inputSchema[aggregateIn](), readOnly(), outputSchema[aggregateOut]()),
			Handler: handler(d, func(ctx context.Context, in aggregateIn) *mcpgo.CallToolResult {
				src := d.Source()
				q, f := dimensionArgs(d, in.Dimension, in.Limit, in.Filter, "buckets")
				if f != nil {
					return f
				}
				sn, limit, e := q.sn, q.limit, q.match
				counts := map[string]int{}
				out := aggregateOut{Dimension: in.Dimension, Buckets: []bucket{}}
				for _, dl := range sn.Dialogs {
					if e.Match(dl) {
						v, _ := dl.Dimension(in.Dimension)
						counts[v]++
						out.TotalMatched++
					}
				}
				for v, n := range counts {
					out.Buckets = append(out.Buckets, bucket{Value: v, Count: n})
				}
				slices.SortFunc(out.Buckets, func(a, b bucket) int {
					if a.Count != b.Count {
						return b.Count - a.Count
					}
					return strings.Compare(a.Value, b.Value)
				})
				if len(out.Buckets) > limit {
					for _, b := range out.Buckets[limit:] {
						out.OtherCount += b.Count
					}
					out.Buckets = out.Buckets[:limit]
				}
				return ok(src, out)
			}),
		},
		{
			Tool: mcpgo.NewTool(toolFindProblems,
				mcpgo.WithDescription("Dialogs matching named problem aliases (failed, slow-setup, short-calls, retransmits, no-ack, auth-loop; thresholds in docs/sip.md), each row naming the aliases it matched; filter is ANDed. Paged like list_dialogs."),
				inputSchema[findProblemsIn](), readOnly(), listOutput[problemRow]()),
			Handler: listHandler[findProblemsIn, problemRow](d, []string{"call_id", "problems"}, func(ctx context.Context, in findProblemsIn) *mcpgo.CallToolResult {
				src := d.Source()
				sn, f := sipSnapshot(d)
				if f != nil {
					return f
				}
				names := in.Problems
				if len(names) == 0 {
					names = sip.ProblemNames()
				}
				for _, n := range names {
					if problems[n] == nil {
						return fail(src, CodeInvalidArgument, fmt.Sprintf("unknown problem %q", n), "use any of "+strings.Join(sip.ProblemNames(), ", "))
					}
				}
				limit, err := sipLimit(in.Limit, sipDefaultLimit, sipMaxLimit)
				if err != nil {
					return fail(src, CodeInvalidArgument, err.Error(), "use a smaller page and follow next_cursor")
				}
				e, f := compileFilter(d, in.Filter)
				if f != nil {
					return f
				}
				matched := func(dl *sip.Dialog) []string {
					var hit []string
					for _, n := range names {
						if problems[n].Match(dl) {
							hit = append(hit, n)
						}
					}
					return hit
				}
				ds, page, err := pageDialogs(src, sn.Dialogs, func(dl *sip.Dialog) bool { return e.Match(dl) && len(matched(dl)) > 0 }, in.Cursor, limit)
				if err != nil {
					return fail(src, CodeInvalidArgument, err.Error(), "start again without a cursor")
				}
				rows := make([]problemRow, len(ds))
				for i, dl := range ds {
					rows[i] = problemRow{Problems: matched(dl), dialogRow: newDialogRow(dl)}
				}
				return list(src, rows, page)
			}),
		},
		{
			Tool: mcpgo.NewTool(toolTriageCall,
				mcpgo.WithDescription("Why did this call end the way it did: outcome, cause (Reason header, else the final status), timings (PDD, setup, duration), matched problem aliases and plain hints."),
				inputSchema[triageIn](), readOnly(), outputSchema[triageOut]()),
			Handler: handler(d, func(ctx context.Context, in triageIn) *mcpgo.CallToolResult {
				sn, f := sipSnapshot(d)
				if f != nil {
					return f
				}
				dl, f := lookupDialog(d, sn, in.CallID)
				if f != nil {
					return f
				}
				return ok(d.Source(), triage(dl, problems))
			}),
		},
		{
			Tool: mcpgo.NewTool(toolSIPReport,
				mcpgo.WithDescription("Capture-wide SIP summary: messages by method and by response, dialogs by state, undecodable messages by reason, TCP/WebSocket/TLS streams (TLS is counted, never read), decoder and reassembly counters, and everything the store's caps shed."),
				readOnly(), outputSchema[reportOut]()),
			Handler: handler(d, func(ctx context.Context, _ noArgs) *mcpgo.CallToolResult {
				sn, f := sipSnapshot(d)
				if f != nil {
					return f
				}
				out := reportOut{Store: sn.Stats, Limits: d.SIP.Limits(), States: map[string]int{}, Notes: []string{}}
				for _, dl := range sn.Dialogs {
					out.States[dl.State]++
				}
				if d.SIPStats != nil {
					ss, ds := d.SIPStats()
					out.Streams, out.Decode = &ss, &ds
					if ss.TLS > 0 {
						out.Notes = append(out.Notes, fmt.Sprintf("%d TLS streams (%d sessions) carried encrypted data nothing here can read: SIP over TLS is not in these counts", ss.TLS, ss.TLSSessions))
					}
				}
				return ok(d.Source(), out)
			}),
		},
	}
}
