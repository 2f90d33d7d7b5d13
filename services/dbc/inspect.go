package dbc

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"fieldtap/drivers/wire"
	"fieldtap/services/untrusted"
)

// Inspect bounds: the counts beside the lists are always whole.
const (
	// MaxInspectMessages bounds the messages one answer lists in full
	// (signals and all); ~2 kB each as JSON.
	MaxInspectMessages = 64
	// MaxInspectSignals bounds the signals listed over one answer.
	MaxInspectSignals = 2048
	// MaxInspectLabels bounds one signal's value table as listed.
	MaxInspectLabels = 256
)

// Byte orders as an inspection spells them.
const (
	OrderIntel    = "little_endian" // @1: start bit is the LSB
	OrderMotorola = "big_endian"    // @0: start bit is the MSB (sawtooth numbering)
)

// ValueLabel is one VAL_ entry.
type ValueLabel struct {
	Raw   int64          `json:"raw"`
	Label untrusted.Text `json:"label"`
}

// SignalInfo is one signal's layout and scaling. Names are identifiers
// (they round-trip into decode and encode); units, comments and labels
// are free text from the file's author and fence themselves.
type SignalInfo struct {
	Name      string `json:"name"`
	StartBit  int    `json:"start_bit"` // as the file writes it
	Length    int    `json:"length"`
	ByteOrder string `json:"byte_order"`
	// ValueType is unsigned, signed, float32 or float64.
	ValueType string         `json:"value_type"`
	Factor    float64        `json:"factor"`
	Offset    float64        `json:"offset"`
	Min       float64        `json:"min"`
	Max       float64        `json:"max"`
	Unit      untrusted.Text `json:"unit,omitempty"`
	// FirstByte and LastByte are the 0-based payload bytes it touches.
	FirstByte int `json:"first_byte"`
	LastByte  int `json:"last_byte"`
	// Multiplexer is true for a switch (M, or mNM); MultiplexedBy names
	// the switch that selects this signal and MuxValues its raw values.
	Multiplexer   bool       `json:"multiplexer"`
	MultiplexedBy string     `json:"multiplexed_by,omitempty"`
	MuxValues     [][2]int64 `json:"multiplex_values,omitempty"`
	// SPN is the file's BA_ "SPN" for the signal; null when it gives none.
	SPN             *uint32        `json:"spn"`
	Comment         untrusted.Text `json:"comment,omitempty"`
	Labels          []ValueLabel   `json:"value_table"`
	LabelsTruncated bool           `json:"value_table_truncated,omitempty"`
}

// MessageInfo is one message and its signals.
type MessageInfo struct {
	ID          string         `json:"id"` // hex as can_frames spells it
	Extended    bool           `json:"extended"`
	Name        string         `json:"name"`
	Size        int            `json:"size_bytes"`
	Transmitter string         `json:"transmitter,omitempty"`
	Comment     untrusted.Text `json:"comment,omitempty"`
	// PGN is set for a J1939 message (matched by PGN) and for an
	// extended message longer than 8 bytes (a J1939 transfer).
	PGN              *uint32      `json:"pgn"`
	Signals          []SignalInfo `json:"signals"`
	SignalsTruncated bool         `json:"signals_truncated,omitempty"`
}

// Inspection is the layout of the messages of a database a query picked.
type Inspection struct {
	Database string `json:"database"`
	File     string `json:"file"`
	J1939    bool   `json:"j1939_pgn_matching"`
	// Messages and Signals count what the query matched; the lists hold
	// at most MaxInspectMessages and MaxInspectSignals of them.
	Messages  int           `json:"messages_matched"`
	Signals   int           `json:"signals_matched"`
	List      []MessageInfo `json:"message_list"`
	Truncated bool          `json:"truncated"`
}

// Inspect lists the layout of the messages named (each a message name or
// its hex id as the file defines it; empty: every message), in file order.
// An unknown name is an error naming it.
func (db *Database) Inspect(messages []string) (Inspection, error) {
	out := Inspection{Database: db.Name, File: db.File, J1939: db.J1939, List: []MessageInfo{}}
	var pick []*Message
	if len(messages) == 0 {
		for i := range db.Messages {
			pick = append(pick, &db.Messages[i])
		}
	}
	for _, name := range messages {
		m, err := db.Message(name)
		if err != nil {
			return Inspection{}, err
		}
		if !slices.Contains(pick, m) {
			pick = append(pick, m)
		}
	}
	listed := 0
	for _, m := range pick {
		out.Messages++
		out.Signals += len(m.Signals)
		if len(out.List) == MaxInspectMessages || listed >= MaxInspectSignals {
			out.Truncated = true
			continue
		}
		mi := messageInfo(m)
		if room := MaxInspectSignals - listed; len(m.Signals) > room {
			mi.Signals, mi.SignalsTruncated, out.Truncated = mi.Signals[:room], true, true
		}
		listed += len(mi.Signals)
		out.List = append(out.List, mi)
	}
	return out, nil
}

// Message resolves a message by name, or by its hex id ("0x" optional)
// as the file defines it.
func (db *Database) Message(name string) (*Message, error) {
	if m := db.MessageByName(name); m != nil {
		return m, nil
	}
	if v, err := strconv.ParseUint(strings.TrimPrefix(strings.ToLower(name), "0x"), 16, 32); err == nil {
		for i := range db.Messages {
			if m := &db.Messages[i]; m.ID == uint32(v) {
				return m, nil
			}
		}
	}
	return nil, fmt.Errorf("%w: database %s has no message %q (by name or hex id)", ErrNoMessage, db.Name, name)
}

// IDHex spells the message's id as can_frames does.
func (m *Message) IDHex() string {
	if m.Extended {
		return wire.FormatCANID(m.ID | wire.CANEFF)
	}
	return wire.FormatCANID(m.ID)
}

// transfer reports whether m describes a J1939 transfer's payload (or any
// PGN-matched J1939 message), and its PGN.
func (m *Message) transfer() (uint32, bool) {
	if m.Extended && (m.J1939 || m.Size > 8) {
		return pgnOf(m.ID), true
	}
	return 0, false
}

func messageInfo(m *Message) MessageInfo {
	mi := MessageInfo{ID: m.IDHex(), Extended: m.Extended, Name: m.Name, Size: m.Size, Transmitter: m.Transmitter,
		Comment: untrusted.Text(m.Comment), Signals: make([]SignalInfo, 0, len(m.Signals))}
	if pgn, ok := m.transfer(); ok {
		mi.PGN = &pgn
	}
	for i := range m.Signals {
		mi.Signals = append(mi.Signals, signalInfo(m, &m.Signals[i]))
	}
	return mi
}

func signalInfo(m *Message, s *Signal) SignalInfo {
	si := SignalInfo{Name: s.Name, StartBit: s.Start, Length: s.Size, ByteOrder: OrderIntel, ValueType: "unsigned",
		Factor: s.Factor, Offset: s.Offset, Min: s.Min, Max: s.Max, Unit: untrusted.Text(s.Unit), Comment: untrusted.Text(s.Comment),
		Multiplexer: s.Switch, Labels: []ValueLabel{}}
	first, last := s.Start, s.Start+s.Size-1
	if s.BigEndian {
		si.ByteOrder = OrderMotorola
		first, last = s.lin, s.lin+s.Size-1
	}
	si.FirstByte, si.LastByte = first/8, last/8
	switch {
	case s.Float != 0:
		si.ValueType = fmt.Sprintf("float%d", s.Float)
	case s.Signed:
		si.ValueType = "signed"
	}
	if s.Mux >= 0 {
		si.MultiplexedBy, si.MuxValues = m.Signals[s.Mux].Name, slices.Clone(s.MuxRanges)
	}
	if s.SPN != 0 {
		spn := s.SPN
		si.SPN = &spn
	}
	raws := make([]int64, 0, len(s.Labels))
	for r := range s.Labels {
		raws = append(raws, r)
	}
	slices.Sort(raws)
	for _, r := range raws {
		if len(si.Labels) == MaxInspectLabels {
			si.LabelsTruncated = true
			break
		}
		si.Labels = append(si.Labels, ValueLabel{Raw: r, Label: untrusted.Text(s.Labels[r])})
	}
	return si
}
