package mcp

import (
	"errors"
	"fmt"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"fieldtap/mcp/untrusted"
	"fieldtap/services/dbc"
	"fieldtap/services/j1939"
)

// maxRowsArg bounds the rows dbc_decode_window lists per port.
type maxRowsArg int

func (maxRowsArg) argSchema() *jsonschema.Schema {
	return withDefault(intSchema(fmt.Sprintf("decoded rows listed per port, at most %d (default %d); the tallies count every frame either way", dbc.MaxWindowRows, dbc.DefaultWindowRows),
		1, dbc.MaxWindowRows), dbc.DefaultWindowRows)
}

type dbcWindowIn struct {
	Database dbcNameArg `json:"database,omitempty" jsonschema:"name given by dbc_load; empty means the only loaded database"`
	Messages []string   `json:"messages,omitempty" jsonschema:"message names or hex ids as the DBC defines them; empty decodes every message of the database"`
	MaxRows  maxRowsArg `json:"max_rows,omitempty"`
	PortSelector
	window
}

type dbcWindowTally struct {
	Message   untrusted.Text `json:"message"`
	ID        string         `json:"id"`
	Frames    int            `json:"frames"`
	Transfers int            `json:"transfers"`
	TooShort  int            `json:"decodes_too_short"`
}

type dbcWindowRow struct {
	Seq     uint64         `json:"seq"`
	Time    time.Time      `json:"time"`
	ID      string         `json:"id"`
	Message untrusted.Text `json:"message"`
	Match   string         `json:"match"` // exact, j1939-pgn, transfer-pgn
	Via     string         `json:"via"`   // direct, tp-BAM, tp-RTS
	Data    string         `json:"data"`
	Signals []dbcValue     `json:"signals"`
}

type dbcWindowPort struct {
	Port      string           `json:"port"`
	Seen      int              `json:"frames_seen"`
	Decoded   int              `json:"decoded"`
	Unmatched int              `json:"unmatched"`
	Messages  []dbcWindowTally `json:"messages"`
	Rows      []dbcWindowRow   `json:"rows"`
	Truncated bool             `json:"rows_truncated"`
}

type dbcWindowOut struct {
	Database string          `json:"database"`
	Ports    []dbcWindowPort `json:"ports"`
}

// dbcValueOf spells a window's decoded value as dbc_decode does.
func dbcValueOf(v dbc.SignalValue) dbcValue {
	return dbcValue{Signal: untrusted.Text(v.Signal), Value: v.Value, Raw: (*dbcRaw)(v.Raw), Unit: untrusted.Text(v.Unit), Label: untrusted.Text(v.Label), Status: v.Status}
}

var dbcDecodeWindow = tool[dbcWindowIn, dbcWindowOut]{
	name:  "dbc_decode_window",
	reads: readsCAN,
	desc: "Decode every frame of a window a loaded DBC describes (all messages or those named), port by port: per message the frames and J1939 transfers (BAM, RTS/CTS) decoded, and rows, oldest first, with how each matched. " +
		"File text is fenced. Rows bounded per port; tallies whole.",
	hints: readOnly(),
	text:  []textSource{textDBC},
	run: func(c *call, in dbcWindowIn) (dbcWindowOut, error) {
		db, err := dbcDatabase(c.d, in.Database)
		if err != nil {
			return dbcWindowOut{}, err
		}
		ps, err := canPorts(c.d, in.PortSelector)
		if err != nil {
			return dbcWindowOut{}, err
		}
		sp, err := in.span()
		if err != nil {
			return dbcWindowOut{}, err
		}
		names := make([]string, len(in.Messages))
		for i, n := range in.Messages {
			names[i] = unfence(n)
		}
		out := dbcWindowOut{Database: db.Name, Ports: make([]dbcWindowPort, 0, len(ps))}
		for i, p := range ps {
			c.progress(float64(i), float64(len(ps)), "decoding "+p.Name())
			w, err := db.DecodeWindow(j1939.Payloads(p.Frames(), j1939.Window{Since: sp.since, Until: sp.until}), dbc.WindowQuery{Messages: names, Limit: int(in.MaxRows)})
			if errors.Is(err, dbc.ErrNoMessage) {
				return dbcWindowOut{}, dbcMessageErr(err)
			}
			if err != nil {
				return dbcWindowOut{}, err
			}
			pw := dbcWindowPort{Port: p.Name(), Seen: w.Seen, Decoded: w.Decoded, Unmatched: w.Unmatched,
				Messages: make([]dbcWindowTally, len(w.Messages)), Rows: make([]dbcWindowRow, len(w.Rows)), Truncated: w.Truncated}
			for j, m := range w.Messages {
				pw.Messages[j] = dbcWindowTally{Message: untrusted.Text(m.Message), ID: m.ID, Frames: m.Frames, Transfers: m.Transfers, TooShort: m.TooShort}
			}
			for j, r := range w.Rows {
				row := dbcWindowRow{Seq: r.Seq, Time: r.Time, ID: r.ID, Message: untrusted.Text(r.Message), Match: r.Match, Via: r.Via, Data: r.Data,
					Signals: make([]dbcValue, len(r.Signals))}
				for k, v := range r.Signals {
					row.Signals[k] = dbcValueOf(v)
				}
				pw.Rows[j] = row
			}
			if w.Decoded == 0 {
				msgs := make([]*dbc.Message, 0, len(names))
				for _, n := range names {
					m, _ := db.Message(n) // found by DecodeWindow
					msgs = append(msgs, m)
				}
				if why := db.Absence(msgs, j1939.Payloads(p.Frames(), j1939.Window{Since: sp.since, Until: sp.until})); why != "" {
					c.warnf("%s: %s", p.Name(), why)
				}
			}
			if w.Truncated {
				c.warnf("%s: listed the first %d decoded rows of %d; narrow since/until or messages for the rest", p.Name(), len(w.Rows), w.Decoded)
			}
			out.Ports = append(out.Ports, pw)
		}
		return out, nil
	},
}
