package dbc

import (
	"encoding/binary"
	"math"
	"strconv"
)

// Status says whether a signal is in the frame.
type Status uint8

const (
	StatusOK Status = iota
	// StatusMuxInactive: the multiplexer selects other signals.
	StatusMuxInactive
	// StatusShort: the frame ends before the signal does.
	StatusShort
)

func (s Status) String() string {
	switch s {
	case StatusOK:
		return "ok"
	case StatusMuxInactive:
		return "not_selected"
	case StatusShort:
		return "frame_too_short"
	}
	return "unknown"
}

// Value is one decoded signal. Raw is the raw value (for a float
// signal, its bit pattern); Physical is raw·factor+offset, or the
// float·factor+offset. Both are zero unless Status is StatusOK.
type Value struct {
	Raw      Raw
	Physical float64
	Status   Status
}

// Raw is a signal's raw value: an unsigned signal's bits as they are (a
// 64-bit one may be over math.MaxInt64, and is never negative), a signed
// one's sign-extended. It writes itself as a JSON integer.
type Raw struct {
	bits   uint64
	signed bool
}

// SignedRaw is the raw value of a signed signal.
func SignedRaw(v int64) Raw { return Raw{bits: uint64(v), signed: true} }

// UnsignedRaw is the raw value of an unsigned signal.
func UnsignedRaw(v uint64) Raw { return Raw{bits: v} }

// Int64 returns r as an int64; ok is false for an unsigned value over
// math.MaxInt64.
func (r Raw) Int64() (v int64, ok bool) {
	return int64(r.bits), r.signed || r.bits <= math.MaxInt64
}

// in reports whether r lies in [lo, hi].
func (r Raw) in(lo, hi int64) bool {
	v, ok := r.Int64()
	return ok && v >= lo && v <= hi
}

func (r Raw) String() string {
	if r.signed {
		return strconv.FormatInt(int64(r.bits), 10)
	}
	return strconv.FormatUint(r.bits, 10)
}

// MarshalJSON writes r as a JSON integer, all 64 bits of it.
func (r Raw) MarshalJSON() ([]byte, error) { return []byte(r.String()), nil }

// Label returns the value description of v, if the file gives one.
func (s *Signal) Label(v Value) (string, bool) {
	if v.Status != StatusOK || s.Labels == nil || s.Float != 0 {
		return "", false
	}
	r, ok := v.Raw.Int64()
	if !ok {
		return "", false
	}
	l, ok := s.Labels[r]
	return l, ok
}

// Decode decodes data as m into dst, one Value per signal in m.Signals
// order, and returns it; dst is reused when it has the capacity, so a
// caller that keeps it allocates nothing.
func (m *Message) Decode(data []byte, dst []Value) []Value {
	n := len(m.Signals)
	if cap(dst) < n {
		dst = make([]Value, n)
	}
	dst = dst[:n]
	var le, be uint64
	short := len(data) <= 8
	if short {
		var b [8]byte
		copy(b[:], data)
		le, be = binary.LittleEndian.Uint64(b[:]), binary.BigEndian.Uint64(b[:])
	}
	bits := 8 * len(data)
	for _, i := range m.order {
		s := &m.Signals[i]
		if s.Mux >= 0 && !s.selected(dst[s.Mux]) {
			dst[i] = Value{Status: StatusMuxInactive}
			continue
		}
		var u uint64
		switch {
		case s.BigEndian && s.lin+s.Size > bits, !s.BigEndian && s.Start+s.Size > bits:
			dst[i] = Value{Status: StatusShort}
			continue
		case short && s.BigEndian:
			u = be << s.lin >> (64 - s.Size)
		case short:
			u = le >> s.Start
			if s.Size < 64 {
				u &= 1<<s.Size - 1
			}
		default:
			u = s.extract(data)
		}
		dst[i] = s.value(u)
	}
	return dst
}

// selected reports whether the multiplexer value sw selects s.
func (s *Signal) selected(sw Value) bool {
	if sw.Status != StatusOK {
		return false
	}
	for _, r := range s.MuxRanges {
		if sw.Raw.in(r[0], r[1]) {
			return true
		}
	}
	return false
}

// extract reads the signal bit by bit from a frame longer than 8 bytes
// (a TP-reassembled payload); bounds were checked by the caller.
func (s *Signal) extract(data []byte) uint64 {
	var u uint64
	if s.BigEndian {
		for i := s.lin; i < s.lin+s.Size; i++ {
			u = u<<1 | uint64(data[i>>3]>>(7-i&7)&1)
		}
		return u
	}
	for i := s.Start + s.Size - 1; i >= s.Start; i-- {
		u = u<<1 | uint64(data[i>>3]>>(i&7)&1)
	}
	return u
}

func (s *Signal) value(u uint64) Value {
	switch s.Float {
	case 32:
		return Value{Raw: UnsignedRaw(u), Physical: float64(math.Float32frombits(uint32(u)))*s.Factor + s.Offset}
	case 64:
		return Value{Raw: UnsignedRaw(u), Physical: math.Float64frombits(u)*s.Factor + s.Offset}
	}
	if !s.Signed {
		// float64(u): a 64-bit unsigned value may not fit an int64.
		return Value{Raw: UnsignedRaw(u), Physical: float64(u)*s.Factor + s.Offset}
	}
	raw := int64(u)
	if s.Size < 64 {
		shift := 64 - s.Size
		raw = int64(u<<shift) >> shift
	}
	return Value{Raw: SignedRaw(raw), Physical: float64(raw)*s.Factor + s.Offset}
}
