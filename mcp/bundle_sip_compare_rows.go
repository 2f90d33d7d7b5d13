package mcp

import (
	"fieldtap/mcp/untrusted"
	"fieldtap/services/sipcompare"
)

// compareRow is one figure of compare_captures on both sides. Its key is
// the box's vocabulary or an identifier (key, bare) or, for a User-Agent,
// sender text (text, fenced): at most one is set, and with metric they
// name the row.
type compareRow struct {
	Rank   *int           `json:"rank" jsonschema:"1 is the largest movement; null when the row is not ranked (note says why)"`
	Metric string         `json:"metric" jsonschema:"dialogs, method, final_code, asr, ner, pdd_p50, pdd_p95, acd, rtp_streams, mos_band, endpoint or user_agent (docs/sip.md)"`
	Key    string         `json:"key" jsonschema:"the category: a method, a final code ((none) without one), a MOS band, an address; empty for a whole-side figure and a user_agent row"`
	Text   untrusted.Text `json:"text" jsonschema:"the User-Agent of a user_agent row, fenced; empty otherwise"`
	Unit   string         `json:"unit" jsonschema:"count, share (of the population), ratio, ms or s"`
	Before *float64       `json:"before" jsonschema:"side A's value; null without a basis"`
	After  *float64       `json:"after" jsonschema:"side B's value; null without a basis"`
	Change *float64       `json:"change" jsonschema:"after - before"`
	// ChangePct is relative to before; null when before is 0 or null.
	ChangePct        *float64 `json:"change_pct" jsonschema:"(after - before) / before, in %; null when before is 0 or null"`
	CountBefore      *int     `json:"count_before,omitempty" jsonschema:"a share's dialogs or streams on side A"`
	CountAfter       *int     `json:"count_after,omitempty" jsonschema:"a share's dialogs or streams on side B"`
	PopulationBefore int      `json:"population_before"`
	PopulationAfter  int      `json:"population_after"`
	PopulationUnit   string   `json:"population_unit" jsonschema:"what the populations count: dialogs, attempts, samples, answered calls or streams"`
	Movement         float64  `json:"movement" jsonschema:"|after - before| / max(|before|, |after|), 0 to 1: the ranking's scale"`
	Note             string   `json:"note,omitempty" jsonschema:"why the row is not ranked: too few, or a side without a basis"`

	order int // the comparison's order, the pager's key
}

func compareRowOf(i int, r sipcompare.Row) compareRow {
	out := compareRow{Metric: r.Family, Unit: r.Unit, Before: r.Before, After: r.After, Change: r.Change, ChangePct: r.ChangePct,
		CountBefore: r.CountBefore, CountAfter: r.CountAfter, PopulationBefore: r.PopBefore, PopulationAfter: r.PopAfter,
		PopulationUnit: r.PopUnit, Movement: r.Movement, Note: r.Note, order: i}
	if r.Rank > 0 {
		rank := r.Rank
		out.Rank = &rank
	}
	if r.Text {
		out.Text = untrusted.Text(r.Key)
	} else {
		out.Key = r.Key
	}
	return out
}
