package mcp

import (
	"fmt"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"fieldtap/mcp/untrusted"
	"fieldtap/services/sip"
)

// maxGroupsArg bounds group_dialogs' groups, as max_buckets does
// aggregate_dialogs' buckets.
type maxGroupsArg int

func (maxGroupsArg) argSchema() *jsonschema.Schema {
	return sipCount("groups", 1, maxBuckets, defaultBuckets)
}

type groupIn struct {
	Dimension dimensionArg `json:"dimension"`
	Filter    filterArg    `json:"filter,omitempty"`
	MaxGroups maxGroupsArg `json:"max_groups,omitempty"`
}

// groupRow is one group: its value bare or fenced as bucketRow's.
type groupRow struct {
	Value   string         `json:"value,omitempty" jsonschema:"the group's value when it is the box's vocabulary or an identifier, and (none) for dialogs without one"`
	Text    untrusted.Text `json:"text,omitempty" jsonschema:"the group's value when senders wrote it (user_agent), fenced"`
	Metrics callMetricsRow `json:"metrics"`
}

// callMetricsRow is the call figures of a group of dialogs
// (sip.CallMetrics, docs/sip.md): each figure with its unit and
// population, or null with a reason.
type callMetricsRow struct {
	Dialogs  int       `json:"dialogs"`
	Attempts int       `json:"attempts"`
	Answered int       `json:"answered"`
	ASR      metricRow `json:"asr"`
	NER      metricRow `json:"ner"`
	ACD      metricRow `json:"acd"`
	PDDp50   metricRow `json:"pdd_p50"`
	PDDp95   metricRow `json:"pdd_p95"`
}

type metricRow struct {
	Value      *float64 `json:"value"`
	Unit       string   `json:"unit"`
	Population int      `json:"population"`
	NullReason string   `json:"null_reason,omitempty"`
}

func metricRowOf(m sip.Metric) metricRow {
	return metricRow{Value: m.Value, Unit: m.Unit, Population: m.Population, NullReason: m.NullReason}
}

func callMetricsRowOf(m sip.CallMetrics) callMetricsRow {
	return callMetricsRow{Dialogs: m.Dialogs, Attempts: m.Attempts, Answered: m.Answered, ASR: metricRowOf(m.ASR), NER: metricRowOf(m.NER),
		ACD: metricRowOf(m.ACD), PDDp50: metricRowOf(m.PDDp50), PDDp95: metricRowOf(m.PDDp95)}
}

type groupOut struct {
	Dimension string     `json:"dimension"`
	Groups    []groupRow `json:"groups"`
	// Other measures the dialogs of the groups past max_groups together;
	// null, with other_groups 0, when every group is listed.
	Other        *callMetricsRow `json:"other"`
	OtherGroups  int             `json:"other_groups"`
	Overall      callMetricsRow  `json:"overall"`
	TotalMatched int             `json:"total_matched"`
	MultiValued  bool            `json:"multi_valued" jsonschema:"a participant dimension: a dialog is measured in each of its participants' groups"`
}

var groupDialogs = tool[groupIn, groupOut]{
	name:  "group_dialogs",
	reads: readsSIP,
	desc:  "Call figures (ASR, NER, ACD, PDD p50/p95) per value of one dimension, each with unit and population (null with a reason without one): groups largest first (at most max_groups), the rest as other, and overall.",
	hints: readOnly(),
	text:  []textSource{textSIP},
	run: func(c *call, in groupIn) (groupOut, error) {
		sn := c.d.SIP.Snapshot()
		e, err := in.Filter.compile()
		if err != nil {
			return groupOut{}, err
		}
		dim := string(in.Dimension)
		g := sn.GroupMetrics(e, dim, count(int(in.MaxGroups), defaultBuckets))
		out := groupOut{Dimension: dim, Groups: make([]groupRow, 0, len(g.Groups)), OtherGroups: g.OtherGroups, Overall: callMetricsRowOf(g.Overall), TotalMatched: g.TotalMatched, MultiValued: g.Multi}
		if g.Other != nil {
			other := callMetricsRowOf(*g.Other)
			out.Other = &other
		}
		for _, gr := range g.Groups {
			b := bucketRowOf(dim, gr.Value, 0)
			out.Groups = append(out.Groups, groupRow{Value: b.Value, Text: b.Text, Metrics: callMetricsRowOf(gr.Metrics)})
		}
		return out, nil
	},
}

// timeline bounds.
const (
	timelineMaxSeconds = 86400 // one day
	// timelineMaxBuckets keeps an answer under ~1 MiB (about 90 bytes a
	// bucket); a longer span takes wider buckets.
	timelineMaxBuckets = 10_000
	// timelineAutoBuckets is what a width the box picks aims at: a
	// series an agent reads whole (about 90 KB).
	timelineAutoBuckets = 1000
)

// timelineWidths are the widths a timeline without bucket_seconds picks
// from: the first that makes at most timelineAutoBuckets, else a day's
// within timelineMaxBuckets. A minute's buckets over a loaded capture of
// last month beside a live port were refused, and asked again.
var timelineWidths = []time.Duration{time.Minute, 5 * time.Minute, 15 * time.Minute, time.Hour, 6 * time.Hour, 24 * time.Hour}

// bucketSecondsArg is timeline's bucket width.
type bucketSecondsArg int

func (bucketSecondsArg) argSchema() *jsonschema.Schema {
	return intSchema(fmt.Sprintf("bucket width, 1 to %d s; without it the first of 60, 300, 900, 3600, 21600 and 86400 that makes at most %d buckets", timelineMaxSeconds, timelineAutoBuckets), 1, timelineMaxSeconds)
}

type timelineIn struct {
	BucketSeconds bucketSecondsArg `json:"bucket_seconds,omitempty"`
	Filter        filterArg        `json:"filter,omitempty"`
	window
}

type timelineBucket struct {
	Start     string `json:"start"`
	Dialogs   int    `json:"dialogs"`
	Invites   int    `json:"invites" jsonschema:"call attempts started in the bucket"`
	Answered  int    `json:"answered" jsonschema:"of those, answered"`
	Failed    int    `json:"failed" jsonschema:"of those, final_code 400 or more, cancelled ones apart; and dialogs without an INVITE that failed, in their creation bucket"`
	Cancelled int    `json:"cancelled" jsonschema:"of those, cancelled by the caller (CANCEL, then 487)"`
}

type timelineOut struct {
	BucketSeconds int              `json:"bucket_seconds" jsonschema:"the buckets' width: bucket_seconds, or the one picked without it"`
	Basis         string           `json:"basis"`
	Buckets       []timelineBucket `json:"buckets"`
	TotalMatched  int              `json:"total_matched"`
}

var timelineTool = tool[timelineIn, timelineOut]{
	name:  "timeline",
	reads: readsSIP | readsMedia,
	desc:  fmt.Sprintf("Dialogs per time bucket by creation time, and call attempts by start: dialogs, INVITEs, answered, failed, cancelled; buckets align to the epoch, empty ones kept; at most %d buckets.", timelineMaxBuckets),
	hints: readOnly(),
	run: func(c *call, in timelineIn) (timelineOut, error) {
		sn := c.d.SIP.Snapshot()
		sp, err := in.span()
		if err != nil {
			return timelineOut{}, err
		}
		e, err := in.Filter.compile()
		if err != nil {
			return timelineOut{}, err
		}
		var bs []sip.TimeBucket
		var width time.Duration
		if in.BucketSeconds > 0 {
			bs, width, err = sn.Timeline(e, []time.Duration{time.Duration(in.BucketSeconds) * time.Second}, sp.since, sp.until, timelineMaxBuckets)
		} else if bs, width, err = sn.Timeline(e, timelineWidths, sp.since, sp.until, timelineAutoBuckets); err != nil {
			// Over a thousand days: a day's buckets, up to the bound.
			bs, width, err = sn.Timeline(e, timelineWidths[len(timelineWidths)-1:], sp.since, sp.until, timelineMaxBuckets)
		}
		if err != nil {
			return timelineOut{}, argErr("bucket_seconds", "use wider buckets or a shorter since/until window", "%v", err)
		}
		out := timelineOut{BucketSeconds: int(width / time.Second), Basis: "dialog creation time (first message) and call attempt start (its first INVITE), capture clock", Buckets: make([]timelineBucket, len(bs))}
		for i, b := range bs {
			out.Buckets[i] = timelineBucket{Start: ts(b.Start), Dialogs: b.Dialogs, Invites: b.Invites, Answered: b.Answered, Failed: b.Failed, Cancelled: b.Cancelled}
			out.TotalMatched += b.Dialogs
		}
		return out, nil
	},
}
