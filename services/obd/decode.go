package obd

import (
	"fmt"
	"strings"

	"fieldtap/services/isotp"
)

// Modes (services) of SAE J1979 decoded here.
const (
	ModeCurrent   = 0x01
	ModeFreeze    = 0x02
	ModeStored    = 0x03
	ModePending   = 0x07
	ModeVehicle   = 0x09
	ModePermanent = 0x0A
	negative      = 0x7F
	positive      = 0x40 // an answer's first byte is its mode + 0x40
	// MaxValues bounds the values one answer yields: a mode 01 answer
	// carries at most six PIDs, a DTC answer on CAN up to ~2 000 codes,
	// more than anyone reads in one row set. Values beyond it are counted
	// in Answer.Dropped.
	MaxValues = 64
)

// IsMode reports whether mode is one this package decodes.
func IsMode(mode byte) bool {
	switch mode {
	case ModeCurrent, ModeFreeze, ModeStored, ModePending, ModeVehicle, ModePermanent:
		return true
	}
	return false
}

// Value is one decoded item of an answer: a parameter, a DTC, a piece of
// vehicle information or a supported-PID bitmap.
type Value struct {
	// PID is the parameter or information type ("0x0C"); "" for a DTC.
	PID string
	// Frame is the freeze frame number (mode 02).
	Frame *int
	Name  string
	Unit  string
	// Value is the number by the public formula; nil when the item is not
	// one number.
	Value *float64
	// State is what the item says in words ("MIL on").
	State string
	// Text is ASCII the ECU wrote (VIN, calibration id, ECU name): whoever
	// shows it fences it.
	Text string
	// Code is a DTC as a technician writes it (P0301) or a CVN in hex.
	Code string
	// Supported lists the PIDs a bitmap says are supported, in hex.
	Supported []string
	// Raw is the item's data bytes in hex (after the PID and frame bytes).
	Raw string
}

// Answer is one decoded OBD answer.
type Answer struct {
	// Mode is the request mode answered (the answer's first byte - 0x40,
	// or the mode a negative response names).
	Mode    byte
	Values  []Value
	Dropped int
	// NRC and NRCName are set for a negative response (0x7F).
	NRC     string
	NRCName string
	// Problem says what could not be decoded, and why.
	Problem string
}

// Decode reads one OBD answer as reassembled by ISO-TP: the positive
// response byte (mode + 0x40) or 0x7F, then the data.
func Decode(resp []byte) Answer {
	if len(resp) == 0 {
		return Answer{Problem: "empty answer"}
	}
	if resp[0] == negative {
		if len(resp) < 3 {
			return Answer{Problem: fmt.Sprintf("negative response of %d bytes, want 3", len(resp))}
		}
		return Answer{Mode: resp[1], NRC: isotp.Hex8(resp[2]), NRCName: isotp.NRCName(resp[2])}
	}
	if resp[0]&positive == 0 {
		return Answer{Problem: fmt.Sprintf("first byte 0x%02X is not an answer (mode + 0x40 or 0x7F)", resp[0])}
	}
	d := decoder{ans: Answer{Mode: resp[0] - positive}}
	body := resp[1:]
	switch d.ans.Mode {
	case ModeCurrent:
		d.params(body, false)
	case ModeFreeze:
		d.params(body, true)
	case ModeStored, ModePending, ModePermanent:
		d.dtcs(body)
	case ModeVehicle:
		d.vehicle(body)
	default:
		d.ans.Problem = fmt.Sprintf("mode 0x%02X is not decoded", d.ans.Mode)
		d.add(Value{Raw: fmt.Sprintf("%X", body)})
	}
	return d.ans
}

type decoder struct{ ans Answer }

func (d *decoder) add(v Value) {
	if len(d.ans.Values) >= MaxValues {
		d.ans.Dropped++
		return
	}
	d.ans.Values = append(d.ans.Values, v)
}

func (d *decoder) problem(format string, a ...any) {
	if d.ans.Problem == "" {
		d.ans.Problem = fmt.Sprintf(format, a...)
	}
}

// params reads mode 01 (PID, data)… or mode 02 (PID, frame, data)…: one
// answer may carry several PIDs. A PID this package does not know ends
// the walk: its size is unknown, so the rest of the answer is its data.
func (d *decoder) params(b []byte, freeze bool) {
	if len(b) == 0 {
		d.problem("answer without a PID")
		return
	}
	for len(b) > 0 {
		p := b[0]
		b = b[1:]
		v := Value{PID: isotp.Hex8(p)}
		if freeze {
			if len(b) == 0 {
				d.problem("PID 0x%02X without its freeze frame number", p)
				return
			}
			f := int(b[0])
			v.Frame, b = &f, b[1:]
		}
		def, known := lookup(p)
		if !known {
			v.Raw = fmt.Sprintf("%X", b)
			d.add(v)
			return
		}
		v.Name, v.Unit = def.name, def.unit
		if len(b) < def.size {
			v.Raw = fmt.Sprintf("%X", b)
			d.add(v)
			d.problem("PID 0x%02X (%s) has %d data bytes, want %d", p, def.name, len(b), def.size)
			return
		}
		data := b[:def.size]
		b = b[def.size:]
		v.Raw = fmt.Sprintf("%X", data)
		switch def.kind {
		case kindSupported:
			v.Supported = supported(p, data)
		case kindMonitor:
			n := float64(data[0] & 0x7F)
			v.Value, v.State = &n, "MIL off"
			if data[0]&0x80 != 0 {
				v.State = "MIL on"
			}
		case kindFreezeDTC:
			v.Code = DTC(data[0], data[1])
		default:
			x := def.value(data)
			v.Value = &x
		}
		d.add(v)
	}
}

// supported lists the PIDs after base whose bit is set, bit 7 of the
// first byte being base+1.
func supported(base uint8, bits []byte) []string {
	out := []string{}
	for i := range 8 * len(bits) {
		if bits[i/8]&(0x80>>(i%8)) != 0 {
			out = append(out, isotp.Hex8(base+uint8(i)+1))
		}
	}
	return out
}

// dtcs reads modes 03, 07 and 0A on CAN: a count, then two bytes a code.
// 0x0000 is padding, not a code.
func (d *decoder) dtcs(b []byte) {
	if len(b) == 0 {
		d.problem("DTC answer without its count")
		return
	}
	n, codes := int(b[0]), b[1:]
	if len(codes) != 2*n {
		d.problem("DTC count %d but %d code bytes", n, len(codes))
	}
	name := map[byte]string{ModeStored: "stored DTC", ModePending: "pending DTC", ModePermanent: "permanent DTC"}[d.ans.Mode]
	count := float64(n)
	d.add(Value{Name: name + " count", Value: &count, Raw: fmt.Sprintf("%02X", b[0])})
	for i := 0; i+1 < len(codes); i += 2 {
		if codes[i] == 0 && codes[i+1] == 0 {
			continue
		}
		d.add(Value{Name: name, Code: DTC(codes[i], codes[i+1]), Raw: fmt.Sprintf("%X", codes[i:i+2])})
	}
}

// DTC writes a two-byte OBD trouble code as a technician does: the
// system letter (P powertrain, C chassis, B body, U network) from the top
// two bits, then four digits ("P0301").
func DTC(hi, lo byte) string {
	return fmt.Sprintf("%c%d%X%02X", "PCBU"[hi>>6], hi>>4&0x03, hi&0x0F, lo)
}

// vehicle reads mode 09: an information type, then for the bitmaps four
// bytes, for the others a count of data items and the items.
func (d *decoder) vehicle(b []byte) {
	if len(b) == 0 {
		d.problem("answer without an information type")
		return
	}
	it, rest := b[0], b[1:]
	v := Value{PID: isotp.Hex8(it), Name: infoNames[it]}
	if supportedPID(it) {
		v.Name = "information types supported"
		if len(rest) < bitmapSize {
			v.Raw = fmt.Sprintf("%X", rest)
			d.add(v)
			d.problem("supported bitmap of %d bytes, want %d", len(rest), bitmapSize)
			return
		}
		v.Raw, v.Supported = fmt.Sprintf("%X", rest[:bitmapSize]), supported(it, rest[:bitmapSize])
		d.add(v)
		return
	}
	size := map[uint8]int{infoVIN: vinLength, infoCalID: calIDLength, infoCVN: cvnLength, infoECUName: nameLength}[it]
	if size == 0 || len(rest) == 0 {
		v.Raw = fmt.Sprintf("%X", rest)
		d.add(v)
		return
	}
	items, data := int(rest[0]), rest[1:]
	if len(data) != items*size {
		d.problem("information type 0x%02X: %d items of %d bytes announced, %d bytes sent", it, items, size, len(data))
	}
	for i := 0; i+size <= len(data); i += size {
		item := v
		item.Raw = fmt.Sprintf("%X", data[i:i+size])
		if it == infoCVN {
			item.Code = item.Raw
		} else {
			item.Text = text(data[i : i+size])
		}
		d.add(item)
	}
}

// text is ECU ASCII without its NUL padding (nor the NUL that pads an
// ECU name's acronym to four characters), spaces trimmed; "" when a byte
// is neither printable nor NUL.
func text(b []byte) string {
	var s strings.Builder
	for _, c := range b {
		switch {
		case c == 0:
		case c >= 0x20 && c <= 0x7E:
			s.WriteByte(c)
		default:
			return ""
		}
	}
	return strings.TrimSpace(s.String())
}
