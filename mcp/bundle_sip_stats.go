package mcp

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"fieldtap/services/sip"
)

const (
	toolGroupDialogs = "group_dialogs"
	toolTimeline     = "timeline"
)

// timeline bounds.
const (
	timelineDefaultSeconds = 60
	timelineMaxSeconds     = 86400 // one day
	// timelineMaxBuckets keeps an answer under ~1 MiB (≈ 90 bytes a bucket).
	timelineMaxBuckets = 10_000
)

type groupIn struct {
	Dimension string `json:"dimension" jsonschema:"one of method (first method), state, final_code, from_user, to_user, src_ip, dst_ip, user_agent (first seen), transport"`
	Filter    string `json:"filter,omitempty" jsonschema:"filter expression applied first (docs/filter.md)"`
	Limit     int    `json:"limit,omitempty" jsonschema:"most groups, largest first; default 20, at most 1000"`
}

type groupRow struct {
	Value   string          `json:"value" untrusted:"true"` // "(none)" when absent
	Metrics sip.CallMetrics `json:"metrics"`
}

type groupOut struct {
	Dimension string     `json:"dimension"`
	Groups    []groupRow `json:"groups"`
	// Other holds the dialogs of groups past limit, measured together;
	// null when every group is listed.
	Other        *sip.CallMetrics `json:"other"`
	OtherGroups  int              `json:"other_groups"`
	Overall      sip.CallMetrics  `json:"overall"`
	TotalMatched int              `json:"total_matched"`
}

type timelineIn struct {
	BucketSeconds int    `json:"bucket_seconds,omitempty" jsonschema:"bucket width in seconds, default 60, at most 86400; buckets align to the Unix epoch"`
	Filter        string `json:"filter,omitempty" jsonschema:"filter expression (docs/filter.md)"`
	Since         string `json:"since,omitempty" jsonschema:"RFC 3339 time; default the first matching dialog"`
	Until         string `json:"until,omitempty" jsonschema:"RFC 3339 time, exclusive; default the last matching dialog"`
}

type timelineBucket struct {
	Start    string `json:"start"`
	Dialogs  int    `json:"dialogs"`
	Invites  int    `json:"invites"`
	Answered int    `json:"answered"`
	Failed   int    `json:"failed"`
}

type timelineOut struct {
	BucketSeconds int              `json:"bucket_seconds"`
	Basis         string           `json:"basis"`
	Buckets       []timelineBucket `json:"buckets"`
	TotalMatched  int              `json:"total_matched"`
}

func parseTime(name, s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%s %q: want RFC 3339, e.g. 2026-11-29T14:00:00Z", name, s)
	}
	return t, nil
}

func sipStatsTools(d Deps) []server.ServerTool {
	return []server.ServerTool{
		{
			Tool: mcpgo.NewTool(toolGroupDialogs,
				mcpgo.WithDescription("Call figures per group of one dimension: ASR, NER, ACD, PDD p50/p95 (nearest rank), each with its unit and the population it was computed over, null with a reason when there is no basis; groups largest first, the rest measured together as other, and the overall figures. Definitions in docs/sip.md."),
				inputSchema[groupIn](), readOnly(), outputSchema[groupOut]()),
			Handler: handler(d, func(ctx context.Context, in groupIn) *mcpgo.CallToolResult {
				src := d.Source()
				q, f := dimensionArgs(d, in.Dimension, in.Limit, in.Filter, "groups")
				if f != nil {
					return f
				}
				sn, limit, e := q.sn, q.limit, q.match
				accs := map[string]*sip.MetricsAcc{}
				counts := map[string]int{}
				var all sip.MetricsAcc
				out := groupOut{Dimension: in.Dimension, Groups: []groupRow{}}
				for _, dl := range sn.Dialogs {
					if !e.Match(dl) {
						continue
					}
					v, _ := dl.Dimension(in.Dimension)
					a := accs[v]
					if a == nil {
						a = &sip.MetricsAcc{}
						accs[v] = a
					}
					a.Add(dl)
					all.Add(dl)
					counts[v]++
					out.TotalMatched++
				}
				keys := make([]string, 0, len(accs))
				for k := range accs {
					keys = append(keys, k)
				}
				slices.SortFunc(keys, func(a, b string) int {
					if sa, sb := counts[a], counts[b]; sa != sb {
						return sb - sa
					}
					return strings.Compare(a, b)
				})
				if len(keys) > limit {
					rest := map[string]bool{}
					for _, k := range keys[limit:] {
						rest[k] = true
					}
					var other sip.MetricsAcc
					for _, dl := range sn.Dialogs {
						if v, _ := dl.Dimension(in.Dimension); rest[v] && e.Match(dl) {
							other.Add(dl)
						}
					}
					r := other.Result()
					out.Other, out.OtherGroups = &r, len(keys)-limit
					keys = keys[:limit]
				}
				for _, k := range keys {
					out.Groups = append(out.Groups, groupRow{Value: k, Metrics: accs[k].Result()})
				}
				out.Overall = all.Result()
				return ok(src, out)
			}),
		},
		{
			Tool: mcpgo.NewTool(toolTimeline,
				mcpgo.WithDescription("Dialogs per time bucket by creation time: dialogs, INVITEs, answered, failed. Buckets align to the Unix epoch and empty buckets are kept, so gaps show as zeros."),
				inputSchema[timelineIn](), readOnly(), outputSchema[timelineOut]()),
			Handler: handler(d, func(ctx context.Context, in timelineIn) *mcpgo.CallToolResult {
				src := d.Source()
				sn, f := sipSnapshot(d)
				if f != nil {
					return f
				}
				secs := in.BucketSeconds
				if secs == 0 {
					secs = timelineDefaultSeconds
				}
				if secs < 1 || secs > timelineMaxSeconds {
					return fail(src, CodeInvalidArgument, fmt.Sprintf("bucket_seconds %d: want 1..%d", secs, timelineMaxSeconds), "use a wider bucket for long captures")
				}
				since, err := parseTime("since", in.Since)
				if err == nil {
					var until time.Time
					if until, err = parseTime("until", in.Until); err == nil {
						return timeline(src, sn, in, secs, since, until, d)
					}
				}
				return fail(src, CodeInvalidArgument, err.Error(), "give times like 2026-11-29T14:00:00Z")
			}),
		},
	}
}

func timeline(src SourceInfo, sn *sip.Snapshot, in timelineIn, secs int, since, until time.Time, d Deps) *mcpgo.CallToolResult {
	e, f := compileFilter(d, in.Filter)
	if f != nil {
		return f
	}
	width := time.Duration(secs) * time.Second
	bs, err := sip.Timeline(sn.Dialogs, func(dl *sip.Dialog) bool { return e.Match(dl) }, width, since, until, timelineMaxBuckets)
	if err != nil {
		return fail(src, CodeInvalidArgument, err.Error(), "use a wider bucket or a shorter since/until window")
	}
	out := timelineOut{BucketSeconds: secs, Basis: "dialog creation time (first message), capture clock", Buckets: make([]timelineBucket, len(bs))}
	for i, b := range bs {
		out.Buckets[i] = timelineBucket{Start: ts(b.Start), Dialogs: b.Dialogs, Invites: b.Invites, Answered: b.Answered, Failed: b.Failed}
		out.TotalMatched += b.Dialogs
	}
	return ok(src, out)
}
