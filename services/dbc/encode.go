package dbc

import (
	"errors"
	"fmt"
	"math"
	"sort"

	"fieldtap/drivers/wire"
)

// MaxEncodeValues bounds the values one Encode takes: a message has at
// most MaxSignalsPerMessage signals.
const MaxEncodeValues = MaxSignalsPerMessage

// rangeSlack is the relative tolerance of the declared [min|max] check:
// files write rounded limits (250.996 for 65535/256 − 0.0039).
const rangeSlack = 1e-6

// exactInt is the largest integer every float64 below it names exactly;
// a raw beyond it cannot be given as a physical value without rounding.
const exactInt = 1 << 53

// Fill bytes for the bits no given value sets when there is no base.
const (
	FillJ1939 = 0xFF // J1939: all ones is "not available" (J1939-71)
	FillOther = 0x00
)

// ErrEncode is wrapped by every refusal of Encode.
var ErrEncode = errors.New("dbc: encode refused")

// EncodeError says which value could not be encoded and why.
type EncodeError struct {
	Message, Signal, Reason string
}

func (e *EncodeError) Error() string {
	if e.Signal == "" {
		return fmt.Sprintf("dbc: encode %s: %s", e.Message, e.Reason)
	}
	return fmt.Sprintf("dbc: encode %s: signal %s: %s", e.Message, e.Signal, e.Reason)
}

func (e *EncodeError) Unwrap() error { return ErrEncode }

// EncodeOptions shape one encoding.
type EncodeOptions struct {
	// Base is the payload to start from (say, the last captured one):
	// signals not given keep its bits. Nil starts from FillJ1939 bytes
	// for a J1939 message and FillOther otherwise. When set it must be
	// exactly the message's size.
	Base []byte
	// ID overrides the message's id (wire.CANEFF set for 29-bit): a J1939
	// message sent from another source address or priority. It must be
	// an id the message matches. 0 keeps the message's id.
	ID uint32
}

// EncodedSignal says what became of one signal.
type EncodedSignal struct {
	Name string
	// Status: set (a value was given), kept (from the base or the fill),
	// not_selected (its multiplexer selects other signals).
	Status    string
	Requested *float64 // the value given; nil when kept
	Raw       Raw
	// Value is what the frame now decodes to (physical); it differs from
	// Requested by the rounding to the signal's resolution.
	Value   *float64
	Rounded bool
}

// Encoded is one message's payload built from signal values: the bytes a
// transmit plan (can_send) sends as one frame.
type Encoded struct {
	Message  string
	ID       uint32 // with wire.CANEFF for 29-bit
	IDHex    string
	Extended bool
	Data     []byte
	DataHex  string
	Size     int
	// SingleFrame is false for a message over 8 bytes: a transfer
	// (J1939 TP, ISO-TP), which one CAN frame cannot carry.
	SingleFrame bool
	Signals     []EncodedSignal
}

// Encode builds m's payload from physical values by signal name. It
// refuses, naming the signal, a value that is not finite, that needs more
// bits than the signal has, that lies outside the file's declared
// [min|max], or that belongs to a multiplexed signal its multiplexer does
// not select; and an unknown signal, a base of the wrong size, an id the
// message does not match. Decoding the result gives every value back to
// within half the signal's factor.
func (m *Message) Encode(values map[string]float64, o EncodeOptions) (Encoded, error) {
	refuse := func(sig, f string, a ...any) (Encoded, error) {
		return Encoded{}, &EncodeError{Message: m.Name, Signal: sig, Reason: fmt.Sprintf(f, a...)}
	}
	if len(values) > MaxEncodeValues {
		return refuse("", "%d values: at most %d", len(values), MaxEncodeValues)
	}
	id := m.ID
	if m.Extended {
		id |= wire.CANEFF
	}
	if o.ID != 0 {
		if m.Matches(wire.CANID(o.ID), o.ID&wire.CANEFF != 0) == MatchNone {
			return refuse("", "id %s does not carry this message (its id is %s)", wire.FormatCANID(o.ID), m.IDHex())
		}
		id = o.ID
	}
	data := make([]byte, m.Size)
	switch {
	case o.Base != nil && len(o.Base) != m.Size:
		return refuse("", "base payload is %d bytes, the message is %d", len(o.Base), m.Size)
	case o.Base != nil:
		copy(data, o.Base)
	case m.J1939:
		for i := range data {
			data[i] = FillJ1939
		}
	}
	names := make([]string, 0, len(values))
	for n := range values {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if m.SignalIndex(n) < 0 {
			return refuse(n, "the message has no such signal")
		}
	}
	out := Encoded{Message: m.Name, ID: id, IDHex: wire.FormatCANID(id), Extended: m.Extended, Size: m.Size,
		SingleFrame: m.Size <= wire.MaxCANData, Signals: make([]EncodedSignal, len(m.Signals))}
	// Multiplexers first, so a selected signal is checked against the
	// switch value just written.
	vals := make([]Value, 0, len(m.Signals))
	for _, i := range m.order {
		s := &m.Signals[i]
		v, given := values[s.Name]
		if s.Mux >= 0 {
			vals = m.Decode(data, vals)
			if !s.selected(vals[s.Mux]) {
				if given {
					return refuse(s.Name, "multiplexer %s (raw %s) does not select it: set %s to one of %v", m.Signals[s.Mux].Name,
						vals[s.Mux].Raw, m.Signals[s.Mux].Name, s.MuxRanges)
				}
				out.Signals[i] = EncodedSignal{Name: s.Name, Status: "not_selected"}
				continue
			}
		}
		if !given {
			out.Signals[i] = EncodedSignal{Name: s.Name, Status: "kept"}
			continue
		}
		u, why := s.raw(v)
		if why != "" {
			return refuse(s.Name, "%s", why)
		}
		s.insert(data, u)
		req := v
		out.Signals[i] = EncodedSignal{Name: s.Name, Status: "set", Requested: &req}
	}
	vals = m.Decode(data, vals)
	for i := range out.Signals {
		es := &out.Signals[i]
		if es.Status == "not_selected" || vals[i].Status != StatusOK {
			continue
		}
		phys := vals[i].Physical
		es.Raw = vals[i].Raw
		if !math.IsNaN(phys) && !math.IsInf(phys, 0) {
			es.Value = &phys
		}
		es.Rounded = es.Requested != nil && *es.Requested != phys
	}
	out.Data = data
	out.DataHex = fmt.Sprintf("%X", data)
	return out, nil
}

// raw is the bit pattern that decodes to v, or why there is none.
func (s *Signal) raw(v float64) (uint64, string) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, "the value is not a finite number"
	}
	if s.Min < s.Max {
		slack := rangeSlack * max(1, math.Abs(s.Min), math.Abs(s.Max))
		if v < s.Min-slack || v > s.Max+slack {
			return 0, fmt.Sprintf("%g is outside the declared range [%g, %g]", v, s.Min, s.Max)
		}
	}
	if s.Factor == 0 {
		return 0, "the factor is 0: no value but the offset can be encoded"
	}
	x := (v - s.Offset) / s.Factor
	switch s.Float {
	case 32:
		if math.Abs(x) > math.MaxFloat32 {
			return 0, fmt.Sprintf("%g does not fit a 32-bit float", v)
		}
		return uint64(math.Float32bits(float32(x))), ""
	case 64:
		return math.Float64bits(x), ""
	}
	r := math.Round(x)
	if math.Abs(r) > exactInt {
		return 0, fmt.Sprintf("%g needs raw %.0f, beyond 2^53: a float64 value cannot name that raw exactly", v, r)
	}
	if s.Signed {
		lo, hi := -math.Ldexp(1, s.Size-1), math.Ldexp(1, s.Size-1)-1
		if r < lo || r > hi {
			return 0, fmt.Sprintf("%g needs raw %.0f, outside %.0f..%.0f for %d signed bits", v, r, lo, hi, s.Size)
		}
		u := uint64(int64(r))
		if s.Size < 64 {
			u &= 1<<s.Size - 1
		}
		return u, ""
	}
	hi := math.Ldexp(1, s.Size) - 1
	if r < 0 || r > hi {
		return 0, fmt.Sprintf("%g needs raw %.0f, outside 0..%.0f for %d unsigned bits", v, r, hi, s.Size)
	}
	return uint64(r), ""
}

// insert writes the low Size bits of u where s lives in data; the bounds
// were checked when the file was parsed.
func (s *Signal) insert(data []byte, u uint64) {
	set := func(pos int, bit uint64) {
		mask := byte(1) << (pos & 7)
		if s.BigEndian {
			mask = byte(1) << (7 - pos&7)
		}
		if bit != 0 {
			data[pos>>3] |= mask
		} else {
			data[pos>>3] &^= mask
		}
	}
	if s.BigEndian {
		for j := range s.Size {
			set(s.lin+j, u>>(s.Size-1-j)&1)
		}
		return
	}
	for j := range s.Size {
		set(s.Start+j, u>>j&1)
	}
}
