package mcp

import (
	"encoding/hex"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"fieldtap/drivers/wire"
	"fieldtap/mcp/untrusted"
	"fieldtap/services/dbc"
)

// dbcTools is the dbc bundle: a loaded database's layout, decoding a
// window of every message (single frames and J1939 transfers), and
// encoding values into the bytes can_send plans. dbc_load and dbc_decode
// stay in the can bundle.
var dbcTools = []toolDef{dbcInspect, dbcDecodeWindow, dbcEncode, dbcFiles}

type dbcInspectIn struct {
	Database dbcNameArg `json:"database,omitempty" jsonschema:"name given by dbc_load; empty means the only loaded database"`
	Messages []string   `json:"messages,omitempty" jsonschema:"message names or hex ids as the DBC defines them; empty lists every message (the first 64 in full)"`
}

// dbcSignalRow is one signal's layout; names are the file author's and
// fence themselves (a fenced name copied back is accepted).
type dbcSignalRow struct {
	Name            untrusted.Text `json:"name"`
	StartBit        int            `json:"start_bit"`
	Length          int            `json:"length"`
	ByteOrder       string         `json:"byte_order"`
	ValueType       string         `json:"value_type"`
	Factor          float64        `json:"factor"`
	Offset          float64        `json:"offset"`
	Min             float64        `json:"min"`
	Max             float64        `json:"max"`
	Unit            untrusted.Text `json:"unit,omitempty"`
	FirstByte       int            `json:"first_byte"`
	LastByte        int            `json:"last_byte"`
	Multiplexer     bool           `json:"multiplexer"`
	MultiplexedBy   untrusted.Text `json:"multiplexed_by,omitempty"`
	MuxValues       [][2]int64     `json:"multiplex_values,omitempty"`
	SPN             *uint32        `json:"spn"`
	Comment         untrusted.Text `json:"comment,omitempty"`
	Labels          []dbcLabelRow  `json:"value_table"`
	LabelsTruncated bool           `json:"value_table_truncated,omitempty"`
}

// dbcLabelRow is one VAL_ entry; the label is the file author's text.
type dbcLabelRow struct {
	Raw   int64          `json:"raw"`
	Label untrusted.Text `json:"label"`
}

type dbcInspectMessage struct {
	ID               string         `json:"id"`
	Extended         bool           `json:"extended"`
	Name             untrusted.Text `json:"name"`
	Size             int            `json:"size_bytes"`
	Transmitter      untrusted.Text `json:"transmitter,omitempty"`
	Comment          untrusted.Text `json:"comment,omitempty"`
	PGN              *uint32        `json:"pgn"`
	Signals          []dbcSignalRow `json:"signals"`
	SignalsTruncated bool           `json:"signals_truncated,omitempty"`
}

type dbcInspectOut struct {
	Database  string              `json:"database"`
	File      string              `json:"file"`
	J1939     bool                `json:"j1939_pgn_matching"`
	Messages  int                 `json:"messages_matched"`
	Signals   int                 `json:"signals_matched"`
	List      []dbcInspectMessage `json:"message_list"`
	Truncated bool                `json:"truncated"`
}

func dbcInspectMessageOf(m dbc.MessageInfo) dbcInspectMessage {
	return dbcInspectMessage{ID: m.ID, Extended: m.Extended, Name: untrusted.Text(m.Name), Size: m.Size, Transmitter: untrusted.Text(m.Transmitter),
		Comment: untrusted.Text(m.Comment), PGN: m.PGN, Signals: mapRows(m.Signals, dbcSignalRowOf), SignalsTruncated: m.SignalsTruncated}
}

func dbcSignalRowOf(s dbc.SignalInfo) dbcSignalRow {
	return dbcSignalRow{Name: untrusted.Text(s.Name), StartBit: s.StartBit, Length: s.Length, ByteOrder: s.ByteOrder, ValueType: s.ValueType,
		Factor: s.Factor, Offset: s.Offset, Min: s.Min, Max: s.Max, Unit: untrusted.Text(s.Unit), FirstByte: s.FirstByte, LastByte: s.LastByte,
		Multiplexer: s.Multiplexer, MultiplexedBy: untrusted.Text(s.MultiplexedBy), MuxValues: s.MuxValues, SPN: s.SPN, Comment: untrusted.Text(s.Comment),
		Labels: mapRows(nonNil(s.Labels), dbcLabelRowOf), LabelsTruncated: s.LabelsTruncated}
}

func dbcLabelRowOf(l dbc.ValueLabel) dbcLabelRow {
	return dbcLabelRow{Raw: l.Raw, Label: untrusted.Text(l.Label)}
}

// dbcMessageErr maps an unknown message to NOT_FOUND.
func dbcMessageErr(err error) error {
	if errors.Is(err, dbc.ErrNoMessage) {
		return notFound("dbc_inspect with no messages lists them all", "%v", err)
	}
	return err
}

var dbcInspect = tool[dbcInspectIn, dbcInspectOut]{
	name:  "dbc_inspect",
	reads: readsNothing,
	desc: "Layout of a loaded DBC's messages (all, or those named): id, size, PGN, transmitter, and per signal start bit, length, byte order, value type, factor, offset, min/max, unit, bytes touched, multiplexing, SPN, value table. " +
		"Names, units, comments and labels come from the file and are fenced. At most 64 messages and 2048 signals listed; the counts are whole.",
	hints: readOnly(),
	text:  []textSource{textDBC},
	run: func(c *call, in dbcInspectIn) (dbcInspectOut, error) {
		db, err := dbcDatabase(c.d, in.Database)
		if err != nil {
			return dbcInspectOut{}, err
		}
		names := make([]string, len(in.Messages))
		for i, n := range in.Messages {
			names[i] = unfence(n)
		}
		ins, err := db.Inspect(names)
		if err != nil {
			return dbcInspectOut{}, dbcMessageErr(err)
		}
		out := dbcInspectOut{Database: ins.Database, File: ins.File, J1939: ins.J1939, Messages: ins.Messages, Signals: ins.Signals,
			List: mapRows(ins.List, dbcInspectMessageOf), Truncated: ins.Truncated}
		if ins.Truncated {
			c.warnf("listed %d of %d messages; name messages to see the rest", len(out.List), ins.Messages)
		}
		return out, nil
	},
}

// dbcSignalValue is one value for dbc_encode.
type dbcSignalValue struct {
	Signal string  `json:"signal" jsonschema:"signal name as dbc_inspect lists it (fenced or not)"`
	Value  float64 `json:"value" jsonschema:"physical value (raw × factor + offset)"`
}

// dbcSignalValues is dbc_encode's values: 1 to dbc.MaxEncodeValues.
type dbcSignalValues []dbcSignalValue

func (dbcSignalValues) argSchema() *jsonschema.Schema {
	t := reflect.TypeFor[dbcSignalValue]()
	item, err := jsonschema.ForType(t, &jsonschema.ForOptions{})
	if err != nil {
		panic(err)
	}
	lo, hi := 1, dbc.MaxEncodeValues
	return &jsonschema.Schema{Type: "array", Items: item, MinItems: &lo, MaxItems: &hi,
		Description: fmt.Sprintf("signal values to set, 1 to %d; signals not given keep the base's bits (or the fill)", hi)}
}

// hexDataArg is a payload in hex.
type hexDataArg string

func (hexDataArg) argSchema() *jsonschema.Schema {
	// Go's regexp caps a repeat count at 1000, so the length is its own bound.
	maxLen := 2 * dbc.MaxMessageBytes
	return &jsonschema.Schema{Type: "string", Pattern: "^([0-9A-Fa-f]{2})+$", MaxLength: &maxLen,
		Description: "payload to start from, hex, exactly the message's size (say the last one can_frames shows); default all 0xFF for J1939, else 0x00"}
}

type dbcEncodeIn struct {
	Database dbcNameArg      `json:"database,omitempty" jsonschema:"name given by dbc_load; empty means the only loaded database"`
	Message  string          `json:"message" jsonschema:"message name, or its hex CAN id as the DBC defines it"`
	Values   dbcSignalValues `json:"values"`
	Base     hexDataArg      `json:"base,omitempty"`
	ID       canIDArg        `json:"id,omitempty" jsonschema:"send under this id instead of the message's (a J1939 message from another source address or priority); it must carry the message"`
}

type dbcEncodedSignal struct {
	Name      untrusted.Text `json:"name"`
	Status    string         `json:"status"` // set, kept, not_selected
	Requested *float64       `json:"requested"`
	Raw       dbcRaw         `json:"raw"`
	Value     *float64       `json:"value"`
	Rounded   bool           `json:"rounded"`
}

// dbcCANSendFrame is one frame as can_send's frames argument takes it.
type dbcCANSendFrame struct {
	ID       string `json:"id"`
	Extended bool   `json:"extended"`
	Data     string `json:"data"`
}

type dbcEncodeOut struct {
	Message     untrusted.Text     `json:"message"`
	ID          string             `json:"id"`
	Extended    bool               `json:"extended"`
	Data        string             `json:"data"`
	Size        int                `json:"size_bytes"`
	SingleFrame bool               `json:"single_frame"`
	Signals     []dbcEncodedSignal `json:"signals"`
	// CANSend is the frame to hand can_send (frames: [can_send_frame]);
	// null for a message over 8 bytes, which needs a transport protocol.
	CANSend *dbcCANSendFrame `json:"can_send_frame"`
}

var dbcEncode = tool[dbcEncodeIn, dbcEncodeOut]{
	name:  "dbc_encode",
	reads: readsNothing,
	desc: "Build a DBC message's payload from physical signal values: the bytes, what each signal now decodes to, and can_send_frame, the frame to pass to can_send (which plans it). " +
		"Refused, naming the signal, when a value does not fit its bits or range, or its multiplexer does not select it. Sends nothing.",
	hints: readOnly(),
	text:  []textSource{textDBC},
	run: func(c *call, in dbcEncodeIn) (dbcEncodeOut, error) {
		db, err := dbcDatabase(c.d, in.Database)
		if err != nil {
			return dbcEncodeOut{}, err
		}
		m, err := dbcMessage(db, in.Message)
		if err != nil {
			return dbcEncodeOut{}, err
		}
		values := map[string]float64{}
		for _, v := range in.Values {
			name := unfence(v.Signal)
			if _, dup := values[name]; dup {
				return dbcEncodeOut{}, argErr("values", "give each signal once", "signal %q given twice", name)
			}
			values[name] = v.Value
		}
		var o dbc.EncodeOptions
		if in.Base != "" {
			if o.Base, err = hex.DecodeString(string(in.Base)); err != nil {
				return dbcEncodeOut{}, argErr("base", "write the payload as hex byte pairs", "%v", err)
			}
		}
		if in.ID != "" {
			o.ID = hexValue(string(in.ID))
			if len(in.ID) > 3 {
				o.ID |= wire.CANEFF
			}
		}
		enc, err := m.Encode(values, o)
		var ee *dbc.EncodeError
		if errors.As(err, &ee) {
			arg := "values"
			switch {
			case strings.Contains(ee.Reason, "base"):
				arg = "base"
			case strings.Contains(ee.Reason, "id "):
				arg = "id"
			}
			return dbcEncodeOut{}, argErr(arg, "dbc_inspect shows each signal's bits, range and multiplexing", "%v", err)
		}
		if err != nil {
			return dbcEncodeOut{}, err
		}
		out := dbcEncodeOut{Message: untrusted.Text(enc.Message), ID: enc.IDHex, Extended: enc.Extended, Data: enc.DataHex, Size: enc.Size,
			SingleFrame: enc.SingleFrame, Signals: make([]dbcEncodedSignal, len(enc.Signals))}
		for i, s := range enc.Signals {
			out.Signals[i] = dbcEncodedSignal{Name: untrusted.Text(s.Name), Status: s.Status, Requested: s.Requested, Raw: dbcRaw(s.Raw), Value: s.Value, Rounded: s.Rounded}
		}
		if enc.SingleFrame {
			out.CANSend = &dbcCANSendFrame{ID: enc.IDHex, Extended: enc.Extended, Data: enc.DataHex}
		} else {
			c.warnf("message %s is %d bytes: one CAN frame carries at most %d, so it needs a transport protocol and can_send cannot take it as one frame", m.Name, enc.Size, wire.MaxCANData)
		}
		return out, nil
	},
}
