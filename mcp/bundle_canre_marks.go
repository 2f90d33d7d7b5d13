package mcp

import (
	"errors"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"fieldtap/services/canre"
)

// reMarks is the analysis against marks; run only when named, since it
// needs marks (the mark tool, or the confirm button pressed while no
// plan waits).
const reMarks = "marks"

// nearMSArg is how close to a mark a change counts.
type nearMSArg int

func (nearMSArg) argSchema() *jsonschema.Schema {
	return intSchema("marks: how close to a mark a change counts, in ms (default 1000)", 1, float64(canre.MaxNear.Milliseconds()))
}

// reMarkStatRow is one bit or byte against the marks.
type reMarkStatRow struct {
	Index     int     `json:"index" jsonschema:"the bit (DBC numbering, byte·8 + bit) or the byte"`
	NearMarks int     `json:"near_marks" jsonschema:"marks it changed within near_ms of"`
	NearShare float64 `json:"near_share"`
	ElseShare float64 `json:"else_share" jsonschema:"share of stretches away from every mark in which it changed: the base rate"`
	Lift      float64 `json:"lift" jsonschema:"near_share - else_share: 1 changes at every mark and nowhere else"`
}

type reMarksRow struct {
	Method    string          `json:"method"`
	Marks     int             `json:"marks" jsonschema:"marks within the frames' span"`
	NearMS    int64           `json:"near_ms"`
	Stretches int             `json:"stretches" jsonschema:"stretches of 2·near_ms away from every mark, the base rate's denominator"`
	Bits      []reMarkStatRow `json:"bits" jsonschema:"strongest first, at most 32"`
	BitsTotal int             `json:"bits_total"`
	Bytes     []reMarkStatRow `json:"bytes" jsonschema:"strongest first"`
}

func reMarksRowOf(r canre.MarkRanking) reMarksRow {
	row := func(s canre.MarkStat) reMarkStatRow { return reMarkStatRow(s) }
	return reMarksRow{Method: r.Method, Marks: r.Marks, NearMS: r.NearMS, Stretches: r.Stretches,
		Bits: mapRows(r.Bits, row), BitsTotal: r.BitsTotal, Bytes: mapRows(r.Bytes, row)}
}

// reMarksOf ranks s against the box's marks.
func reMarksOf(c *call, s *canre.Series, nearMS *nearMSArg) (*reMarksRow, error) {
	near := canre.DefaultNear
	if nearMS != nil {
		near = time.Duration(*nearMS) * time.Millisecond
	}
	r, err := canre.RankByMarks(s, c.d.Marks.Times(time.Time{}, time.Time{}), near)
	if errors.Is(err, canre.ErrNoMarks) {
		return nil, notFound("press the confirm button while no plan waits, or call mark, at the moments the control is worked; what_happened with kinds [mark] lists them",
			"analyses marks: no mark between the first and last frame of %s in the window", s.IDHex)
	}
	if err != nil {
		return nil, err
	}
	v := reMarksRowOf(r)
	return &v, nil
}
