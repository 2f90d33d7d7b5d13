package mcp

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"fieldtap/drivers/wire"
	"fieldtap/services/canbus"
	"fieldtap/services/dbc"
)

// Tool names of the DBC half of the can bundle.
const (
	toolDBCLoad   = "dbc_load"
	toolDBCDecode = "dbc_decode"
)

const (
	// codeDBCRefused: the file was read but is not a database we decode;
	// the message carries file:line: reason.
	codeDBCRefused = "DBC_REFUSED"
	// dbcMaxListed bounds dbc_load's message list (~200 bytes a row with
	// fencing): the counts beside it are always whole.
	dbcMaxListed = 256
)

type dbcLoadIn struct {
	File string `json:"file" jsonschema:"DBC file name inside the box's data directory (store.data_dir), e.g. truck.dbc or oem/engine.dbc; no .. and no absolute path"`
	Name string `json:"name,omitempty" jsonschema:"name to keep it under (letters, digits, _ - .); default the file name without .dbc; an existing name is replaced"`
}

type dbcMessageRow struct {
	ID       string `json:"id"` // hex, 3 or 8 digits as can_frames shows it
	Extended bool   `json:"extended"`
	Name     string `json:"name" untrusted:"field"`
	Size     int    `json:"size_bytes"`
	Signals  int    `json:"signals"`
	Comment  string `json:"comment,omitempty" untrusted:"field"`
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
	MessageList   []dbcMessageRow `json:"message_list"`
	ListTruncated bool            `json:"message_list_truncated"`
	Loaded        []string        `json:"loaded"`
}

type dbcDecodeIn struct {
	Database string `json:"database,omitempty" jsonschema:"name given by dbc_load; empty means the only loaded database"`
	Message  string `json:"message" jsonschema:"message name, or its hex CAN id as the DBC defines it"`
	Signal   string `json:"signal,omitempty" jsonschema:"one signal of the message; empty decodes every signal"`
	Port     string `json:"port,omitempty" jsonschema:"CAN port name; empty means the first port"`
	Since    string `json:"since,omitempty" jsonschema:"RFC 3339 time; frames at or after"`
	Until    string `json:"until,omitempty" jsonschema:"RFC 3339 time; frames before"`
	Limit    int    `json:"limit,omitempty" jsonschema:"page size, 1..1000, default 100"`
	Cursor   string `json:"cursor,omitempty" jsonschema:"next_cursor of the previous page"`
	Projection
}

type dbcValue struct {
	Signal string   `json:"signal" untrusted:"field"`
	Value  *float64 `json:"value"` // physical; null unless status is ok
	Raw    *int64   `json:"raw"`   // sign-extended raw (float signals: bit pattern); null unless ok
	Unit   string   `json:"unit,omitempty" untrusted:"field"`
	Label  string   `json:"label,omitempty" untrusted:"field"`
	Status string   `json:"status"` // ok, not_selected, frame_too_short, not_finite
}

type dbcDecodeRow struct {
	Seq     uint64     `json:"seq"`
	Time    time.Time  `json:"time"`
	ID      string     `json:"id"`
	Match   string     `json:"match"` // exact, or j1939-pgn (same PGN, another SA/priority)
	Data    string     `json:"data"`
	Signals []dbcValue `json:"signals"`
}

// unfence accepts a name an agent copied with its fence markers.
func unfence(s string) string {
	s = strings.TrimPrefix(s, fenceOpen)
	return strings.TrimSuffix(s, fenceClose)
}

func dbcFail(src SourceInfo, err error) *mcpgo.CallToolResult {
	var de *dbc.Error
	switch {
	case errors.As(err, &de):
		return fail(src, codeDBCRefused, de.Error(), "fix the file at that line, or ask for a DBC export from the tool that made it")
	case errors.Is(err, os.ErrNotExist):
		return fail(src, codeCANNotFound, err.Error(), "the file must be in the box's data directory (store.data_dir)")
	case errors.Is(err, dbc.ErrTooMany), errors.Is(err, dbc.ErrTooBig):
		return fail(src, CodeInvalidArgument, err.Error(), "load under the name of a database you no longer need")
	case errors.Is(err, dbc.ErrNoDataDir):
		return fail(src, codeCANNotFound, err.Error(), "set store.data_dir in the configuration")
	}
	return fail(src, CodeInvalidArgument, err.Error(), "give a file name relative to the data directory")
}

func dbcLoadAnswer(db *dbc.Database, loaded []*dbc.Database) dbcLoadOut {
	out := dbcLoadOut{Name: db.Name, File: db.File, Messages: len(db.Messages), Signals: db.Signals, J1939: db.J1939,
		Notes: nonNil(db.Notes), MessageList: []dbcMessageRow{}}
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
			Name: m.Name, Size: m.Size, Signals: len(m.Signals), Comment: m.Comment})
	}
	for _, l := range loaded {
		out.Loaded = append(out.Loaded, l.Name)
	}
	return out
}

func dbcIDHex(id uint32, ext bool) string {
	if ext {
		return wire.FormatCANID(id | wire.CANEFF)
	}
	return wire.FormatCANID(id)
}

// dbcDatabase resolves the database argument.
func dbcDatabase(d Deps, name string) (*dbc.Database, *mcpgo.CallToolResult) {
	src := d.Source()
	if d.DBC == nil {
		return nil, fail(src, codeCANNotFound, "this box has no DBC registry", "check the can bundle is built with CAN support")
	}
	if name != "" {
		db, err := d.DBC.Get(name)
		if err != nil {
			return nil, fail(src, codeCANNotFound, err.Error(), "call dbc_load first; its answer lists the loaded names")
		}
		return db, nil
	}
	all := d.DBC.List()
	if len(all) != 1 {
		names := make([]string, 0, len(all))
		for _, db := range all {
			names = append(names, db.Name)
		}
		return nil, fail(src, CodeInvalidArgument, fmt.Sprintf("%d databases are loaded (%s): name one", len(all), strings.Join(names, ", ")),
			"pass database; dbc_load loads one")
	}
	return all[0], nil
}

// dbcMessage resolves the message argument: a name, or a hex id.
func dbcMessage(db *dbc.Database, arg string) (*dbc.Message, error) {
	arg = unfence(arg)
	if m := db.MessageByName(arg); m != nil {
		return m, nil
	}
	v, err := strconv.ParseUint(strings.TrimPrefix(strings.ToLower(arg), "0x"), 16, 32)
	if err == nil {
		for i := range db.Messages {
			if m := &db.Messages[i]; m.ID == uint32(v) {
				return m, nil
			}
		}
	}
	return nil, fmt.Errorf("database %s has no message %q (by name or hex id)", db.Name, arg)
}

func dbcValues(m *dbc.Message, vals []dbc.Value, only int) []dbcValue {
	out := make([]dbcValue, 0, len(vals))
	for i, v := range vals {
		if only >= 0 && i != only {
			continue
		}
		s := &m.Signals[i]
		row := dbcValue{Signal: s.Name, Unit: s.Unit, Status: v.Status.String()}
		switch {
		case v.Status != dbc.StatusOK:
		case math.IsNaN(v.Physical) || math.IsInf(v.Physical, 0):
			row.Status = "not_finite" // JSON has no NaN; the raw bits stay
			row.Raw = &v.Raw
		default:
			phys, raw := v.Physical, v.Raw
			row.Value, row.Raw = &phys, &raw
			row.Label, _ = s.Label(v)
		}
		out = append(out, row)
	}
	return out
}

func dbcTools(d Deps) []server.ServerTool {
	return []server.ServerTool{
		{
			Tool: mcpgo.NewTool(toolDBCLoad,
				mcpgo.WithDescription("Load a DBC database from the box's data directory under a name (at most 8 kept). Latin-1 is transcoded, // comments stripped, nested multiplexing read; a file that is not a DBC is refused with file:line: reason. Answers counts and the message list."),
				inputSchema[dbcLoadIn](), readOnly(), outputSchema[dbcLoadOut]()),
			Handler: handler(d, func(ctx context.Context, in dbcLoadIn) *mcpgo.CallToolResult {
				src := d.Source()
				if d.DBC == nil {
					return fail(src, codeCANNotFound, "this box has no DBC registry", "check the can bundle is built with CAN support")
				}
				db, err := d.DBC.Load(ctx, in.Name, in.File)
				if err != nil {
					return dbcFail(src, err)
				}
				out := dbcLoadAnswer(db, d.DBC.List())
				var warn []string
				if out.ListTruncated {
					warn = append(warn, fmt.Sprintf("message_list shows the first %d of %d messages", dbcMaxListed, out.Messages))
				}
				return ok(src, out, warn...)
			}),
		},
		{
			Tool: mcpgo.NewTool(toolDBCDecode,
				mcpgo.WithDescription("Decode one DBC message (every signal, or one signal over time) from a port's stored frames, oldest first: physical value, raw, unit, value label, and whether multiplexing selected it. J1939 databases also match other source addresses by PGN. Paged with an opaque cursor."),
				inputSchema[dbcDecodeIn](), readOnly(), listOutput[dbcDecodeRow]()),
			Handler: listHandler[dbcDecodeIn, dbcDecodeRow](d, []string{"seq"}, func(ctx context.Context, in dbcDecodeIn) *mcpgo.CallToolResult {
				src := d.Source()
				db, bad := dbcDatabase(d, in.Database)
				if bad != nil {
					return bad
				}
				m, err := dbcMessage(db, in.Message)
				if err != nil {
					return fail(src, codeCANNotFound, err.Error(), "dbc_load lists the message names and ids")
				}
				only := -1
				if in.Signal != "" {
					if only = m.SignalIndex(unfence(in.Signal)); only < 0 {
						return fail(src, codeCANNotFound, fmt.Sprintf("the message has no signal %q", unfence(in.Signal)), "omit signal to decode them all")
					}
				}
				p, limit, from, bad := canPageArgs(d, in.Port, in.Limit, in.Cursor)
				if bad != nil {
					return bad
				}
				f, err := parseCANFilter("", "", in.Since, in.Until)
				if err != nil {
					return fail(src, CodeInvalidArgument, err.Error(), "times are RFC 3339")
				}
				snap := p.Frames()
				var vals []dbc.Value
				keep := func(r canbus.Record) bool {
					return r.ID&(wire.CANRTR|wire.CANERR) == 0 && f.match(&r) &&
						m.Matches(wire.CANID(r.ID), r.ID&wire.CANEFF != 0) != dbc.MatchNone
				}
				rows, page := seqPage(src, snap, from, limit, keep, func(seq uint64, r canbus.Record) dbcDecodeRow {
					vals = m.Decode(r.Payload(), vals)
					how := m.Matches(wire.CANID(r.ID), r.ID&wire.CANEFF != 0)
					return dbcDecodeRow{Seq: seq, Time: r.Time, ID: wire.FormatCANID(r.ID), Match: how.String(),
						Data: fmt.Sprintf("%X", r.Payload()), Signals: dbcValues(m, vals, only)}
				})
				var warn []string
				if from > 0 && from < snap.FirstSeq() {
					warn = append(warn, "frames between the cursor and the oldest stored frame were evicted by the store's bounds")
				}
				if m.Size > 8 {
					warn = append(warn, fmt.Sprintf("the message is %d bytes (a transport-protocol payload); single frames carry at most 8, so later signals read frame_too_short", m.Size))
				}
				return list(src, rows, page, warn...)
			}),
		},
	}
}
