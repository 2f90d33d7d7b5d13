package dbc

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"fieldtap/drivers/wire"
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
	Raw   int64
	Label string
}

// SignalInfo is one signal's layout and scaling. Names are identifiers
// (they round-trip into decode and encode); units, comments and labels
// are free text from the file's author, for an answer to fence.
type SignalInfo struct {
	Name      string
	StartBit  int // as the file writes it
	Length    int
	ByteOrder string
	// ValueType is unsigned, signed, float32 or float64.
	ValueType string
	Factor    float64
	Offset    float64
	Min       float64
	Max       float64
	Unit      string
	// FirstByte and LastByte are the 0-based payload bytes it touches.
	FirstByte int
	LastByte  int
	// Multiplexer is true for a switch (M, or mNM); MultiplexedBy names
	// the switch that selects this signal and MuxValues its raw values.
	Multiplexer   bool
	MultiplexedBy string
	MuxValues     [][2]int64
	// SPN is the file's BA_ "SPN" for the signal; nil when it gives none.
	SPN             *uint32
	Comment         string
	Labels          []ValueLabel
	LabelsTruncated bool
}

// MessageInfo is one message and its signals.
type MessageInfo struct {
	ID          string // hex as can_frames spells it
	Extended    bool
	Name        string
	Size        int
	Transmitter string
	Comment     string
	// PGN is set for a J1939 message (matched by PGN) and for an
	// extended message longer than 8 bytes (a J1939 transfer).
	PGN              *uint32
	Signals          []SignalInfo
	SignalsTruncated bool
}

// Inspection is the layout of the messages of a database a query picked.
type Inspection struct {
	Database string
	File     string
	J1939    bool
	// Messages and Signals count what the query matched; the lists hold
	// at most MaxInspectMessages and MaxInspectSignals of them.
	Messages  int
	Signals   int
	List      []MessageInfo
	Truncated bool
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
		Comment: m.Comment, Signals: make([]SignalInfo, 0, len(m.Signals))}
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
		Factor: s.Factor, Offset: s.Offset, Min: s.Min, Max: s.Max, Unit: s.Unit, Comment: s.Comment,
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
		si.Labels = append(si.Labels, ValueLabel{Raw: r, Label: s.Labels[r]})
	}
	return si
}
