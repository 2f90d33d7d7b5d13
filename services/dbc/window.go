package dbc

import (
	"fmt"
	"iter"
	"math"
	"slices"
	"strconv"
	"time"

	"fieldtap/drivers/wire"
	"fieldtap/services/canbus"
	"fieldtap/services/ring"
)

// Window decode bounds: the tallies are always whole, the rows say when
// they were cut.
const (
	// DefaultWindowRows and MaxWindowRows bound the decoded rows one
	// answer lists (a row of 8 signals is ~1 kB as JSON).
	DefaultWindowRows = 200
	MaxWindowRows     = 5000
	// physDigits rounds physical values to what a float64 holds honestly
	// after one multiply and add (0.05 × 247 is 12.350000000000001).
	physDigits = 12
)

// Frame is one thing to decode: a CAN frame, or the payload of a J1939
// transfer. Data is valid only during the iteration step.
type Frame struct {
	Seq  uint64
	Time time.Time
	// ID carries wire.CANEFF for 29-bit; for a transfer it is built from
	// the transferred PGN, the sender and the destination.
	ID   uint32
	Data []byte
	// Transfer is "" for a single frame, else how it travelled ("tp-BAM",
	// "tp-RTS"); PGN and SA are then the transfer's.
	Transfer string
	PGN      uint32
	SA       uint8
}

// WindowQuery selects what DecodeWindow decodes.
type WindowQuery struct {
	// Messages are names or hex ids as the file defines them; empty
	// decodes every message of the database.
	Messages []string
	// Limit bounds the rows listed: 0 means DefaultWindowRows, at most
	// MaxWindowRows.
	Limit int
}

// SignalValue is one decoded signal of a row.
type SignalValue struct {
	Signal string
	Value  *float64 // physical; nil unless Status is ok
	Raw    *Raw     // raw value (float signals: the bit pattern); nil unless ok
	// Unit and Label are the file author's free text.
	Unit  string
	Label string
	// Status: ok, not_selected, frame_too_short, not_finite.
	Status string
}

// DecodedRow is one decoded frame or transfer.
type DecodedRow struct {
	Seq     uint64
	Time    time.Time
	ID      string
	Message string
	// Match: exact, j1939-pgn (another source or priority), or
	// transfer-pgn (a TP payload matched by its PGN).
	Match   string
	Via     string // direct, tp-BAM, tp-RTS
	Data    string
	Signals []SignalValue
}

// MessageTally counts one message over the window.
type MessageTally struct {
	Message   string
	ID        string
	Frames    int // single frames decoded
	Transfers int // transfer payloads decoded
	// TooShort counts decodes in which some signal ran past the payload:
	// a single frame for a message longer than 8 bytes reads this way.
	TooShort int
}

// WindowDecode is every decodable frame of a window.
type WindowDecode struct {
	Database  string
	Seen      int
	Decoded   int
	Unmatched int // frames no selected message describes
	Messages  []MessageTally
	Rows      []DecodedRow
	Truncated bool
}

// Match kinds DecodeWindow adds for transfers.
const matchTransfer = "transfer-pgn"

// DecodeWindow decodes every frame of frames that a selected message
// describes, in order, into at most Limit rows; single frames match as
// Lookup does, transfers by PGN (see LookupTransfer).
func (db *Database) DecodeWindow(frames iter.Seq[Frame], q WindowQuery) (WindowDecode, error) {
	limit := q.Limit
	switch {
	case limit == 0:
		limit = DefaultWindowRows
	case limit < 1 || limit > MaxWindowRows:
		return WindowDecode{}, fmt.Errorf("dbc: limit %d: want 1..%d", limit, MaxWindowRows)
	}
	var only []*Message
	for _, n := range q.Messages {
		m, err := db.Message(n)
		if err != nil {
			return WindowDecode{}, err
		}
		only = append(only, m)
	}
	out := WindowDecode{Database: db.Name, Messages: []MessageTally{}, Rows: []DecodedRow{}}
	tally := map[*Message]*MessageTally{}
	var order []*Message
	var vals []Value
	for f := range frames {
		out.Seen++
		var m *Message
		var how string
		if f.Transfer == "" {
			var mt Match
			m, mt = db.Lookup(wire.CANID(f.ID), f.ID&wire.CANEFF != 0)
			how = mt.String()
		} else {
			m = db.LookupTransfer(f.PGN, f.SA)
			how = matchTransfer
		}
		if m == nil || (only != nil && !slices.Contains(only, m)) {
			out.Unmatched++
			continue
		}
		out.Decoded++
		t := tally[m]
		if t == nil {
			t = &MessageTally{Message: m.Name, ID: m.IDHex()}
			tally[m] = t
			order = append(order, m)
		}
		if f.Transfer == "" {
			t.Frames++
		} else {
			t.Transfers++
		}
		vals = m.Decode(f.Data, vals)
		if slices.ContainsFunc(vals, func(v Value) bool { return v.Status == StatusShort }) {
			t.TooShort++
		}
		if len(out.Rows) == limit {
			out.Truncated = true
			continue
		}
		via := f.Transfer
		if via == "" {
			via = "direct"
		}
		out.Rows = append(out.Rows, DecodedRow{Seq: f.Seq, Time: f.Time, ID: wire.FormatCANID(f.ID), Message: m.Name, Match: how,
			Via: via, Data: fmt.Sprintf("%X", f.Data), Signals: SignalValues(m, vals)})
	}
	for _, m := range order {
		out.Messages = append(out.Messages, *tally[m])
	}
	return out, nil
}

// SignalValues spells decoded values for a reader, physical values
// rounded to physDigits significant digits.
func SignalValues(m *Message, vals []Value) []SignalValue {
	out := make([]SignalValue, len(vals))
	for i, v := range vals {
		s := &m.Signals[i]
		sv := SignalValue{Signal: s.Name, Unit: s.Unit, Status: v.Status.String()}
		switch {
		case v.Status != StatusOK:
		case math.IsNaN(v.Physical) || math.IsInf(v.Physical, 0):
			raw := v.Raw
			sv.Status, sv.Raw = "not_finite", &raw // JSON has no NaN; the bits stay
		default:
			phys, raw := RoundPhysical(v.Physical), v.Raw
			sv.Value, sv.Raw = &phys, &raw
			if l, ok := s.Label(v); ok {
				sv.Label = l
			}
		}
		out[i] = sv
	}
	return out
}

// RoundPhysical rounds a decoded value to physDigits significant digits.
func RoundPhysical(v float64) float64 {
	r, err := strconv.ParseFloat(strconv.FormatFloat(v, 'g', physDigits, 64), 64)
	if err != nil {
		return v
	}
	return r
}

// LookupTransfer finds the message a J1939 transfer of pgn from sa
// carries: the extended message with that PGN and source address first,
// then the one message with that PGN that is J1939 or longer than a frame
// (a TP payload is never a single frame's). Nil when none, or when
// several share the PGN and none names sa.
func (db *Database) LookupTransfer(pgn uint32, sa uint8) *Message {
	var byPGN *Message
	shared := false
	for i := range db.Messages {
		m := &db.Messages[i]
		if !m.Extended || pgnOf(m.ID) != pgn {
			continue
		}
		if uint8(m.ID) == sa {
			return m
		}
		if _, ok := m.transfer(); !ok {
			continue
		}
		if byPGN != nil {
			shared = true
		}
		byPGN = m
	}
	if shared {
		return nil
	}
	return byPGN
}

// CANFrames yields the data frames of a port's ring with a time in
// [since, until) (zero bounds are open), oldest first.
func CANFrames(snap ring.Snapshot[canbus.Record], since, until time.Time) iter.Seq[Frame] {
	return func(yield func(Frame) bool) {
		snap.Range(snap.FirstSeq(), func(seq uint64, r canbus.Record) bool {
			if r.ID&(wire.CANRTR|wire.CANERR) != 0 || (!since.IsZero() && r.Time.Before(since)) || (!until.IsZero() && !r.Time.Before(until)) {
				return true
			}
			return yield(Frame{Seq: seq, Time: r.Time, ID: r.ID, Data: r.Payload()})
		})
	}
}
