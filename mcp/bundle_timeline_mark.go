package mcp

import (
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"fieldtap/services/marks"
)

const toolMark = "mark"

// labelArg is a mark's label.
type labelArg string

func (labelArg) argSchema() *jsonschema.Schema {
	n := marks.MaxLabel
	return &jsonschema.Schema{Type: "string", MaxLength: &n, Description: "what is marked, one line (\"horn pressed\"); default mcp"}
}

type markIn struct {
	Label labelArg `json:"label,omitempty"`
	At    timeArg  `json:"at,omitempty" jsonschema:"RFC 3339 time of the moment on the box's clock; default now"`
}

type markOut struct {
	Seq     uint64    `json:"seq" jsonschema:"the mark's number in this run"`
	At      time.Time `json:"at"`
	Source  string    `json:"source"`
	Marks   int       `json:"marks" jsonschema:"marks the box holds now"`
	Dropped uint64    `json:"dropped" jsonschema:"oldest marks pushed out by the bound"`
	// Journaled says the recorder's marks.json holds it.
	Journaled bool `json:"journaled" jsonschema:"the recorder's marks.json holds it (false when the recorder is off or the write failed)"`
}

var markTool = tool[markIn, markOut]{
	name:  toolMark,
	reads: readsNothing,
	desc:  "Mark a moment (default now) with a label, as a press of the confirm button does when no plan waits: a mark row on every port in what_happened, kept in the recorder, and the reference of can_re_analyse's marks analysis. Changes no bus.",
	hints: hints(false, false, false, false),
	run: func(c *call, in markIn) (markOut, error) {
		at, err := in.At.parse("at")
		if err != nil {
			return markOut{}, err
		}
		if at.IsZero() {
			at = time.Now()
		}
		label := string(in.Label)
		if label == "" {
			label = marks.SourceMCP
		}
		if err := marks.CheckLabel(label); err != nil {
			return markOut{}, argErr("label", "one line of text, at most 128 bytes", "%v", err)
		}
		failedBefore := c.d.Marks.SinkFailures()
		m, err := c.d.Marks.Add(at, label, marks.SourceMCP)
		if err != nil {
			return markOut{}, argErr("label", "one line of text, at most 128 bytes", "%v", err)
		}
		all, dropped := c.d.Marks.Snapshot()
		journaled := c.d.BlackBox.Recorder != nil && c.d.Marks.SinkFailures() == failedBefore
		if !journaled {
			c.warnf("the mark is held in memory only: the recorder is off or could not write marks.json, so it is gone after a restart")
		}
		return markOut{Seq: m.Seq, At: m.At, Source: m.Source, Marks: len(all), Dropped: dropped, Journaled: journaled}, nil
	},
}
