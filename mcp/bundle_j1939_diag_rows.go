package mcp

import (
	"time"

	"fieldtap/services/j1939"
)

// The j1939_diag bundle's answer rows, built from the window views of
// services/j1939 (diag, history, compare, topology); the NAME, lamps and
// DTC rows are bundle_j1939_rows.go's.

// j1939SpanRow is what a window of frames covered.
type j1939SpanRow struct {
	Port   string    `json:"port"`
	From   time.Time `json:"from"`
	To     time.Time `json:"to"`
	Frames int       `json:"frames"`
	// Seconds is null, with a reason, when the window holds fewer than
	// two frame times.
	Seconds       *float64 `json:"seconds"`
	SecondsReason string   `json:"seconds_reason,omitempty"`
	// OldestStored is the port's oldest stored frame: a window starting
	// before it lost frames to the ring's bounds.
	OldestStored *time.Time `json:"oldest_stored"`
	Evicted      bool       `json:"window_start_evicted"`
}

func j1939SpanRowOf(s j1939.Span) j1939SpanRow { return j1939SpanRow(s) }

// j1939DTCListRow is one source's DM1 or DM2 at a moment.
type j1939DTCListRow struct {
	Seq      uint64        `json:"seq"`
	Time     time.Time     `json:"time"`
	Via      string        `json:"via"`
	Lamps    j1939LampsRow `json:"lamps"`
	NoActive bool          `json:"no_active"`
	DTCs     []j1939DTCRow `json:"dtcs"`
}

func j1939DTCListRowOf(l j1939.DTCList) j1939DTCListRow {
	return j1939DTCListRow{Seq: l.Seq, Time: l.Time, Via: l.Via, Lamps: j1939LampsRowOf(l.Lamps), NoActive: l.NoActive, DTCs: mapRows(l.DTCs, j1939DTCRowOf)}
}

// j1939AckRow is an ECU's answer to a clear.
type j1939AckRow struct {
	Seq     uint64    `json:"seq"`
	Time    time.Time `json:"time"`
	From    int       `json:"from_sa"`
	Control string    `json:"control"` // ack, nack, access_denied, cannot_respond, or "control N"
}

// j1939ClearTargetRow is one ECU a clear reached: its list last seen
// before the clear and first seen after it.
type j1939ClearTargetRow struct {
	SA           int              `json:"sa"`
	Before       *j1939DTCListRow `json:"before"`
	BeforeReason string           `json:"before_reason,omitempty"`
	After        *j1939DTCListRow `json:"after"`
	AfterReason  string           `json:"after_reason,omitempty"`
	Cleared      []j1939DTCRow    `json:"cleared"`
	Remaining    []j1939DTCRow    `json:"remaining"`
}

func j1939ClearTargetRowOf(t j1939.ClearTarget) j1939ClearTargetRow {
	return j1939ClearTargetRow{SA: t.SA, Before: rowOrNil(t.Before, j1939DTCListRowOf), BeforeReason: t.BeforeReason,
		After: rowOrNil(t.After, j1939DTCListRowOf), AfterReason: t.AfterReason,
		Cleared: mapRows(t.Cleared, j1939DTCRowOf), Remaining: mapRows(t.Remaining, j1939DTCRowOf)}
}

// j1939ClearRow is one DM3 or DM11 seen on the bus.
type j1939ClearRow struct {
	Seq       uint64                `json:"seq"`
	Time      time.Time             `json:"time"`
	Kind      string                `json:"kind"` // DM3 or DM11
	Via       string                `json:"via"`  // request (a Request for the DM) or direct (the DM's PGN as a command)
	Requester int                   `json:"requester_sa"`
	Target    int                   `json:"target_sa"`      // 255 asks every ECU
	Name      *j1939NameRow         `json:"requester_name"` // null when the requester never claimed in the window
	Acks      []j1939AckRow         `json:"acks"`
	AckReason string                `json:"ack_reason,omitempty"`
	Targets   []j1939ClearTargetRow `json:"targets"`
}

func j1939ClearRowOf(c j1939.Clear) j1939ClearRow {
	return j1939ClearRow{Seq: c.Seq, Time: c.Time, Kind: c.Kind, Via: c.Via, Requester: c.Requester, Target: c.Target,
		Name: rowOrNil(c.Name, j1939NameRowOf), Acks: mapRows(c.Acks, func(a j1939.Ack) j1939AckRow { return j1939AckRow(a) }),
		AckReason: c.AckReason, Targets: mapRows(c.Targets, j1939ClearTargetRowOf)}
}

// j1939DTCChangeRow is one DTC appearing in, or leaving, a source's DM1
// or DM2.
type j1939DTCChangeRow struct {
	Seq    uint64      `json:"seq"`
	Time   time.Time   `json:"time"`
	SA     int         `json:"sa"`
	List   string      `json:"list"`   // DM1 or DM2
	Change string      `json:"change"` // appeared, gone
	DTC    j1939DTCRow `json:"dtc"`
}

func j1939DTCChangeRowOf(c j1939.DTCChange) j1939DTCChangeRow {
	return j1939DTCChangeRow{Seq: c.Seq, Time: c.Time, SA: c.SA, List: c.List, Change: c.Change, DTC: j1939DTCRowOf(c.DTC)}
}

// j1939SourceDMsRow is one source's last DM1 and DM2 in the window.
type j1939SourceDMsRow struct {
	SA          int              `json:"sa"`
	DM1         *j1939DTCListRow `json:"dm1"`
	DM1Messages int              `json:"dm1_messages"`
	DM2         *j1939DTCListRow `json:"dm2"`
	DM2Messages int              `json:"dm2_messages"`
}

func j1939SourceDMsRowOf(s j1939.SourceDMs) j1939SourceDMsRow {
	return j1939SourceDMsRow{SA: s.SA, DM1: rowOrNil(s.DM1, j1939DTCListRowOf), DM1Messages: s.DM1Messages,
		DM2: rowOrNil(s.DM2, j1939DTCListRowOf), DM2Messages: s.DM2Messages}
}

// j1939DiagnosticsRow is one port's J1939-73 view of the window.
type j1939DiagnosticsRow struct {
	Span             j1939SpanRow        `json:"span"`
	Sources          []j1939SourceDMsRow `json:"sources"`
	Changes          []j1939DTCChangeRow `json:"dtc_changes"`
	ChangesTotal     int                 `json:"dtc_changes_total"`
	ChangesTruncated bool                `json:"dtc_changes_truncated"`
	Clears           []j1939ClearRow     `json:"clears"`
	ClearsTotal      int                 `json:"clears_total"`
	ClearsTruncated  bool                `json:"clears_truncated"`
	MalformedDM      int                 `json:"malformed_dm"` // DM1/DM2 payloads under two bytes
}

func j1939DiagnosticsRowOf(d j1939.Diagnostics) j1939DiagnosticsRow {
	return j1939DiagnosticsRow{Span: j1939SpanRowOf(d.Span), Sources: mapRows(d.Sources, j1939SourceDMsRowOf),
		Changes: mapRows(d.Changes, j1939DTCChangeRowOf), ChangesTotal: d.ChangesTotal, ChangesTruncated: d.ChangesTruncated,
		Clears: mapRows(d.Clears, j1939ClearRowOf), ClearsTotal: d.ClearsTotal, ClearsTruncated: d.ClearsTruncated, MalformedDM: d.MalformedDM}
}

// j1939BucketRow is one point of a reduced series.
type j1939BucketRow struct {
	Start   time.Time `json:"start"`
	Samples int       `json:"samples"` // valid values in the bucket
	Min     *float64  `json:"min"`     // null when the bucket holds none
	Max     *float64  `json:"max"`
	Last    *float64  `json:"last"`
}

// j1939SourceHistoryRow is one source's statistics of the SPN over the
// window; min, max, mean and last are null (the counts say why) when no
// value was valid.
type j1939SourceHistoryRow struct {
	SA           int              `json:"sa"`
	Messages     int              `json:"messages"` // messages that carried the PGN
	Valid        int              `json:"valid"`
	NotAvailable int              `json:"not_available"`
	Error        int              `json:"error"`
	Reserved     int              `json:"reserved"`
	Missing      int              `json:"missing"` // payload too short for the SPN
	Min          *float64         `json:"min"`
	Max          *float64         `json:"max"`
	Mean         *float64         `json:"mean"`
	Last         *float64         `json:"last"`
	FirstTime    *time.Time       `json:"first_time"`
	LastTime     *time.Time       `json:"last_time"`
	Series       []j1939BucketRow `json:"series,omitempty"`
}

func j1939SourceHistoryRowOf(h j1939.SourceHistory) j1939SourceHistoryRow {
	return j1939SourceHistoryRow{SA: h.SA, Messages: h.Messages, Valid: h.Valid, NotAvailable: h.NotAvailable, Error: h.Error,
		Reserved: h.Reserved, Missing: h.Missing, Min: h.Min, Max: h.Max, Mean: h.Mean, Last: h.Last, FirstTime: h.FirstTime,
		LastTime: h.LastTime, Series: mapRows(h.Series, func(b j1939.Bucket) j1939BucketRow { return j1939BucketRow(b) })}
}

// j1939RateRow is a (PGN, SA) pair's traffic on one side.
type j1939RateRow struct {
	Frames    int      `json:"frames"`
	PerSecond *float64 `json:"per_second"` // null when the side's span is 0
}

func j1939RateRowOf(r j1939.Rate) j1939RateRow { return j1939RateRow(r) }

// j1939PGNChangeRow is one (PGN, SA) pair compared.
type j1939PGNChangeRow struct {
	PGN    uint32        `json:"pgn"`
	Name   string        `json:"name"`
	SA     int           `json:"sa"`
	A      *j1939RateRow `json:"a"` // null: absent in A
	B      *j1939RateRow `json:"b"`
	Status string        `json:"status"`     // new, vanished, changed, same
	Ratio  *float64      `json:"rate_ratio"` // B's rate over A's; null unless both have one
}

func j1939PGNChangeRowOf(p j1939.PGNChange) j1939PGNChangeRow {
	return j1939PGNChangeRow{PGN: p.PGN, Name: p.Name, SA: p.SA, A: rowOrNil(p.A, j1939RateRowOf), B: rowOrNil(p.B, j1939RateRowOf),
		Status: p.Status, Ratio: p.Ratio}
}

// j1939DTCDiffRow is one DTC whose presence differs between the sides'
// last DM1 (or DM2) of a source.
type j1939DTCDiffRow struct {
	SA     int         `json:"sa"`
	List   string      `json:"list"`   // DM1 or DM2
	Change string      `json:"change"` // new (only in B), gone (only in A), occurrence (both, count moved)
	DTC    j1939DTCRow `json:"dtc"`
	OCA    *int        `json:"oc_a"` // occurrence count in A; null: absent
	OCB    *int        `json:"oc_b"`
}

func j1939DTCDiffRowOf(d j1939.DTCDiff) j1939DTCDiffRow {
	return j1939DTCDiffRow{SA: d.SA, List: d.List, Change: d.Change, DTC: j1939DTCRowOf(d.DTC), OCA: d.OCA, OCB: d.OCB}
}

// j1939ComparisonRow is what changed from side A to side B; the pair
// counts are over every pair, whatever rows lists.
type j1939ComparisonRow struct {
	SpanA             j1939SpanRow        `json:"span_a"`
	SpanB             j1939SpanRow        `json:"span_b"`
	New               int                 `json:"pairs_new"`
	Vanished          int                 `json:"pairs_vanished"`
	Changed           int                 `json:"pairs_changed"`
	Same              int                 `json:"pairs_same"`
	Rows              []j1939PGNChangeRow `json:"rows"`
	RowsTruncated     bool                `json:"rows_truncated"`
	IDsNew            []string            `json:"ids_new"` // CAN ids in hex
	IDsVanished       []string            `json:"ids_vanished"`
	IDsNewTotal       int                 `json:"ids_new_total"`
	IDsVanishedTotal  int                 `json:"ids_vanished_total"`
	SourcesNew        []int               `json:"sources_new"`
	SourcesVanished   []int               `json:"sources_vanished"`
	DTCs              []j1939DTCDiffRow   `json:"dtc_changes"`
	KeyOverflowA      int                 `json:"key_overflow_a"` // frames whose pair found the side's table full
	KeyOverflowB      int                 `json:"key_overflow_b"`
	RateChangeTrigger float64             `json:"rate_change_threshold"`
}

func j1939ComparisonRowOf(c j1939.Comparison) j1939ComparisonRow {
	return j1939ComparisonRow{SpanA: j1939SpanRowOf(c.SpanA), SpanB: j1939SpanRowOf(c.SpanB), New: c.New, Vanished: c.Vanished,
		Changed: c.Changed, Same: c.Same, Rows: mapRows(c.Rows, j1939PGNChangeRowOf), RowsTruncated: c.RowsTruncated,
		IDsNew: c.IDsNew, IDsVanished: c.IDsVanished, IDsNewTotal: c.IDsNewTotal, IDsVanishedTotal: c.IDsVanishedTotal,
		SourcesNew: c.SourcesNew, SourcesVanished: c.SourcesVanished, DTCs: mapRows(c.DTCs, j1939DTCDiffRowOf),
		KeyOverflowA: c.KeyOverflowA, KeyOverflowB: c.KeyOverflowB, RateChangeTrigger: c.RateChangeTrigger}
}

// j1939NodeRow is one source address on the bus.
type j1939NodeRow struct {
	SA          int           `json:"sa"`
	Name        *j1939NameRow `json:"name"` // claimed in the window or before it; null when none is known
	NameInScope bool          `json:"name_claimed_in_window"`
	Frames      int           `json:"frames"`
	PGNs        int           `json:"pgns_sent"`
	First       time.Time     `json:"first_seen"`
	Last        time.Time     `json:"last_seen"`
	Conflicts   int           `json:"claim_conflicts"`
}

func j1939NodeRowOf(n j1939.Node) j1939NodeRow {
	return j1939NodeRow{SA: n.SA, Name: rowOrNil(n.Name, j1939NameRowOf), NameInScope: n.NameInScope, Frames: n.Frames,
		PGNs: n.PGNs, First: n.First, Last: n.Last, Conflicts: n.Conflicts}
}

// j1939EdgeRow is who talks to whom about what.
type j1939EdgeRow struct {
	From       int       `json:"from"`
	To         int       `json:"to"` // 255: every node (a broadcast)
	Kind       string    `json:"kind"`
	PGN        uint32    `json:"pgn"`
	PGNName    string    `json:"pgn_name"`
	Count      int       `json:"count"`
	Complete   int       `json:"complete,omitempty"` // transfers: how they ended
	Incomplete int       `json:"incomplete,omitempty"`
	First      time.Time `json:"first"`
	Last       time.Time `json:"last"`
}

// j1939TopologyRow is one port's bus as a graph over the window.
type j1939TopologyRow struct {
	Span         j1939SpanRow   `json:"span"`
	Nodes        []j1939NodeRow `json:"nodes"`
	Edges        []j1939EdgeRow `json:"edges"`
	EdgeOverflow int            `json:"edge_overflow"` // events in no edge: the edge table was full
}

func j1939TopologyRowOf(t j1939.Topology) j1939TopologyRow {
	return j1939TopologyRow{Span: j1939SpanRowOf(t.Span), Nodes: mapRows(t.Nodes, j1939NodeRowOf),
		Edges: mapRows(t.Edges, func(e j1939.Edge) j1939EdgeRow { return j1939EdgeRow(e) }), EdgeOverflow: t.EdgeOverflow}
}
