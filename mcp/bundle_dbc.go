package mcp

import (
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"fieldtap/drivers/wire"
	"fieldtap/mcp/untrusted"
	"fieldtap/services/canbus"
	"fieldtap/services/dbc"
)

// dbcMaxListed bounds dbc_load's message list (~200 bytes a row with
// fencing): the counts beside it are always whole.
const dbcMaxListed = 256

// dbcNameArg is the name a database is kept under.
type dbcNameArg string

func (dbcNameArg) argSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", Pattern: fmt.Sprintf(`^[A-Za-z0-9_.-]{1,%d}$`, dbc.MaxNameBytes),
		Description: fmt.Sprintf("letters, digits, _ - . (at most %d)", dbc.MaxNameBytes)}
}

type dbcLoadIn struct {
	File string     `json:"file" jsonschema:"DBC file name inside the box's data directory (store.data_dir), e.g. truck.dbc or oem/engine.dbc; no .. and no absolute path"`
	Name dbcNameArg `json:"name,omitempty" jsonschema:"name to keep it under (letters, digits, _ - .); default the file name without .dbc; an existing name is replaced"`
}

type dbcMessageRow struct {
	ID       string         `json:"id"` // hex, 3 or 8 digits as can_frames shows it
	Extended bool           `json:"extended"`
	Name     untrusted.Text `json:"name"`
	Size     int            `json:"size_bytes"`
	Signals  int            `json:"signals"`
	Comment  untrusted.Text `json:"comment,omitempty"`
}

type dbcLoadOut struct {
	Name          string          `json:"name"`
	File          string          `json:"file"`
	Messages      int             `json:"messages"`
	Signals       int             `json:"signals"`
	Extended      int             `json:"extended_messages"`
	Multiplexed   int             `json:"multiplexed_signals"`
	J1939         bool            `json:"j1939_pgn_matching"`
	Notes         []string        `json:"notes"`
	Warnings      []string        `json:"warnings"` // deviations read anyway, each naming its line
	MessageList   []dbcMessageRow `json:"message_list"`
	ListTruncated bool            `json:"message_list_truncated"`
	Loaded        []string        `json:"loaded"`
}

// dbcErr maps the registry's errors to the vocabulary.
func dbcErr(err error) error {
	var de *dbc.Error
	switch {
	case errors.As(err, &de):
		return failErr(CodeDBCRefused, de.Error(), "fix the file at that line, or ask for a DBC export from the tool that made it")
	case errors.Is(err, os.ErrNotExist):
		return notFound("the file must be in the box's data directory (store.data_dir)", "%v", err)
	case errors.Is(err, dbc.ErrTooMany), errors.Is(err, dbc.ErrTooBig):
		return argErr("name", "load under the name of a database you no longer need", "%v", err)
	case errors.Is(err, dbc.ErrNoDataDir):
		return unavailable("data directory for DBC files", "set store.data_dir in the configuration")
	}
	return argErr("file", "give a file name relative to the data directory", "%v", err)
}

func dbcIDHex(id uint32, ext bool) string {
	if ext {
		return wire.FormatCANID(id | wire.CANEFF)
	}
	return wire.FormatCANID(id)
}

var dbcLoad = tool[dbcLoadIn, dbcLoadOut]{
	name:  "dbc_load",
	reads: readsNothing,
	desc: "Load a DBC file from the box's data directory under a name (at most 8 kept). Latin-1, // comments, nested multiplexing and a missing ';' (warned, with the line) are read; a non-DBC is refused with file:line: reason. Answers counts and the message list. " +
		"Sends nothing.",
	hints: readOnly(),
	text:  []textSource{textDBC},
	run: func(c *call, in dbcLoadIn) (dbcLoadOut, error) {
		db, err := c.d.DBC.Load(c.ctx, string(in.Name), in.File)
		if err != nil {
			return dbcLoadOut{}, dbcErr(err)
		}
		out := dbcLoadOut{Name: db.Name, File: db.File, Messages: len(db.Messages), Signals: db.Signals, J1939: db.J1939,
			Notes: nonNil(db.Notes), Warnings: nonNil(db.Warnings), MessageList: []dbcMessageRow{}, Loaded: []string{}}
		for _, m := range db.Messages {
			if m.Extended {
				out.Extended++
			}
			for _, s := range m.Signals {
				if s.Mux >= 0 {
					out.Multiplexed++
				}
			}
			if len(out.MessageList) == dbcMaxListed {
				out.ListTruncated = true
				continue
			}
			out.MessageList = append(out.MessageList, dbcMessageRow{ID: dbcIDHex(m.ID, m.Extended), Extended: m.Extended,
				Name: untrusted.Text(m.Name), Size: m.Size, Signals: len(m.Signals), Comment: untrusted.Text(m.Comment)})
		}
		for _, l := range c.d.DBC.List() {
			out.Loaded = append(out.Loaded, l.Name)
		}
		if len(db.Warnings) > 0 {
			c.warnf("%s deviates from the DBC format in %d place(s), read anyway: see warnings", db.File, len(db.Warnings))
		}
		if out.ListTruncated {
			c.warnf("message_list shows the first %d of %d messages", dbcMaxListed, out.Messages)
		}
		return out, nil
	},
}

type dbcDecodeIn struct {
	Database dbcNameArg `json:"database,omitempty" jsonschema:"name given by dbc_load; empty means the only loaded database"`
	Message  string     `json:"message" jsonschema:"message name, or its hex CAN id as the DBC defines it"`
	Signal   string     `json:"signal,omitempty" jsonschema:"one signal of the message; empty decodes every signal"`
	PortSelector
	window
	Paging
	Projection
}

// dbcRaw is a raw signal value in an answer: an integer, all 64 bits of
// an unsigned one (dbc.Raw writes it).
type dbcRaw dbc.Raw

func (r dbcRaw) MarshalJSON() ([]byte, error) { return dbc.Raw(r).MarshalJSON() }

type dbcValue struct {
	Signal untrusted.Text `json:"signal"`
	Value  *float64       `json:"value"` // physical; null unless status is ok
	Raw    *dbcRaw        `json:"raw"`   // unsigned as read, signed sign-extended (float signals: bit pattern); null unless ok
	Unit   untrusted.Text `json:"unit,omitempty"`
	Label  untrusted.Text `json:"label,omitempty"`
	Status string         `json:"status"` // ok, not_selected, frame_too_short, not_finite
}

type dbcDecodeRow struct {
	Port    string     `json:"port"`
	Seq     uint64     `json:"seq"`
	Time    time.Time  `json:"time"`
	ID      string     `json:"id"`
	Match   string     `json:"match"` // exact, or j1939-pgn (same PGN, another SA/priority)
	Data    string     `json:"data"`
	Signals []dbcValue `json:"signals"`
}

// unfence accepts a name an agent copied with its fence markers.
func unfence(s string) string {
	s = strings.TrimPrefix(s, untrusted.Open)
	return strings.TrimSuffix(s, untrusted.Close)
}

// dbcDatabase resolves the database argument.
func dbcDatabase(d Deps, name dbcNameArg) (*dbc.Database, error) {
	if name != "" {
		db, err := d.DBC.Get(string(name))
		if err != nil {
			return nil, notFound("call dbc_load first; its answer lists the loaded names", "%v", err)
		}
		return db, nil
	}
	all := d.DBC.List()
	if len(all) != 1 {
		names := make([]string, 0, len(all))
		for _, db := range all {
			names = append(names, db.Name)
		}
		return nil, argErr("database", "pass database; dbc_load loads one", "%d databases are loaded (%s): name one", len(all), strings.Join(names, ", "))
	}
	return all[0], nil
}

// dbcMessage resolves the message argument: a name, or a hex id.
func dbcMessage(db *dbc.Database, arg string) (*dbc.Message, error) {
	arg = unfence(arg)
	if m := db.MessageByName(arg); m != nil {
		return m, nil
	}
	if v, err := strconv.ParseUint(strings.TrimPrefix(strings.ToLower(arg), "0x"), 16, 32); err == nil {
		for i := range db.Messages {
			if m := &db.Messages[i]; m.ID == uint32(v) {
				return m, nil
			}
		}
	}
	return nil, notFound("dbc_load lists the message names and ids", "database %s has no message %q (by name or hex id)", db.Name, arg)
}

func dbcValues(m *dbc.Message, vals []dbc.Value, only int) []dbcValue {
	out := make([]dbcValue, 0, len(vals))
	for i, v := range vals {
		if only >= 0 && i != only {
			continue
		}
		s := &m.Signals[i]
		row := dbcValue{Signal: untrusted.Text(s.Name), Unit: untrusted.Text(s.Unit), Status: v.Status.String()}
		switch {
		case v.Status != dbc.StatusOK:
		case math.IsNaN(v.Physical) || math.IsInf(v.Physical, 0):
			row.Status = "not_finite" // JSON has no NaN; the raw bits stay
			raw := dbcRaw(v.Raw)
			row.Raw = &raw
		default:
			phys, raw := v.Physical, dbcRaw(v.Raw)
			row.Value, row.Raw = &phys, &raw
			label, _ := s.Label(v)
			row.Label = untrusted.Text(label)
		}
		out = append(out, row)
	}
	return out
}

var dbcDecode = tool[dbcDecodeIn, page[dbcDecodeRow]]{
	name:  "dbc_decode",
	reads: readsCAN,
	desc: "Decode one DBC message (every signal, or one) from the stored frames, port by port, oldest first: value, raw, unit, label, multiplexing status. " +
		"J1939 databases also match by PGN. File text is fenced (accepted back fenced). No match: says which ids the file and bus have. Paged.",
	hints: readOnly(),
	ids:   []string{"port", "seq"},
	text:  []textSource{textDBC},
	run: func(c *call, in dbcDecodeIn) (page[dbcDecodeRow], error) {
		db, err := dbcDatabase(c.d, in.Database)
		if err != nil {
			return page[dbcDecodeRow]{}, err
		}
		m, err := dbcMessage(db, in.Message)
		if err != nil {
			return page[dbcDecodeRow]{}, err
		}
		only := -1
		if in.Signal != "" {
			if only = m.SignalIndex(unfence(in.Signal)); only < 0 {
				return page[dbcDecodeRow]{}, notFound("omit signal to decode them all", "message %s has no signal %q", m.Name, unfence(in.Signal))
			}
		}
		ps, err := canPorts(c.d, in.PortSelector)
		if err != nil {
			return page[dbcDecodeRow]{}, err
		}
		sp, err := in.span()
		if err != nil {
			return page[dbcDecodeRow]{}, err
		}
		if m.Size > wire.MaxCANData {
			c.warnf("message %s is %d bytes (a transport-protocol payload); single frames carry at most %d, so later signals read frame_too_short", m.Name, m.Size, wire.MaxCANData)
		}
		var vals []dbc.Value
		out, err := pagePortRings(c, in.Paging, canRings(c.d, ps), "frames",
			func(_ string, r canbus.Record) bool {
				return r.ID&(wire.CANRTR|wire.CANERR) == 0 && sp.holds(r.Time) && m.Matches(wire.CANID(r.ID), r.ID&wire.CANEFF != 0) != dbc.MatchNone
			},
			func(port string, seq uint64, r canbus.Record) dbcDecodeRow {
				vals = m.Decode(r.Payload(), vals)
				how := m.Matches(wire.CANID(r.ID), r.ID&wire.CANEFF != 0)
				return dbcDecodeRow{Port: port, Seq: seq, Time: r.Time, ID: wire.FormatCANID(r.ID), Match: how.String(),
					Data: fmt.Sprintf("%X", r.Payload()), Signals: dbcValues(m, vals, only)}
			})
		if err == nil && out.Page.TotalMatched == 0 {
			dbcWarnAbsent(c, db, []*dbc.Message{m}, ps, sp)
		}
		return out, err
	},
}

// dbcWarnAbsent warns, port by port, that no frame of the window carries
// an id of msgs, naming theirs and the ids the port's frames carried.
func dbcWarnAbsent(c *call, db *dbc.Database, msgs []*dbc.Message, ps []*canbus.Port, sp span) {
	for _, p := range ps {
		if why := db.Absence(msgs, dbc.CANFrames(p.Frames(), sp.since, sp.until)); why != "" {
			c.warnf("%s: %s", p.Name(), why)
		}
	}
}
