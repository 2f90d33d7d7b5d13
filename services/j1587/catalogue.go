package j1587

import "strings"

// PIDInfo is one row of the PID catalogue: what the decoder knows of a
// PID, read from the same table Interpret uses.
type PIDInfo struct {
	PID  uint16
	Page int // 1, or 2 for PIDs sent after the 255 prefix
	Name string
	Kind string // number, bits, text, faults, multisection, request
	// Length is how the PID's number fixes its data length (J1587 §A.1):
	// one byte, two bytes, a length byte, or the rest of the message.
	Length string
	// ValueBytes is what a number, bit field or request reads.
	ValueBytes int
	Signed     bool
	Scale      *float64 // nil when the PID has no single number
	Unit       string
}

// Length names, by page-relative PID range.
const (
	lengthOne      = "1 byte"
	lengthTwo      = "2 bytes"
	lengthVariable = "length byte, then that many bytes"
	lengthRest     = "rest of the message"
)

// pidLength is the data length rule of a PID.
func pidLength(pid uint16) string {
	switch p := pid % page2Base; {
	case p < firstTwoByte:
		return lengthOne
	case p < firstVariable:
		return lengthTwo
	case p == pidRestOfMsg:
		return lengthRest
	}
	return lengthVariable
}

// PIDs returns the PID catalogue, by PID. Any PID not listed is decoded
// as raw bytes (see docs/j1587.md for the table's source).
func PIDs() []PIDInfo {
	out := make([]PIDInfo, 0, len(defs))
	for _, d := range defs {
		r := PIDInfo{PID: d.PID, Page: 1 + int(d.PID/page2Base), Name: d.Name, Kind: d.Kind.String(), Length: pidLength(d.PID), Signed: d.Signed, Unit: d.Unit}
		switch d.Kind {
		case KindNumber:
			s := d.Scale
			r.Scale, r.ValueBytes = &s, d.Size
		case KindBits, KindRequest:
			one := 1.0
			r.Scale, r.ValueBytes = &one, d.Size
		}
		out = append(out, r)
	}
	return out
}

// MIDInfo is one J1587 message identifier.
type MIDInfo struct {
	MID  uint8
	Name string // "" for a reserved or reclaimed MID
	// J2497 marks the MIDs of trailer equipment and the tractor/trailer
	// gateways: the units that speak on the J2497 power-line link.
	J2497 bool
}

// j2497Word is how the MID table marks trailer equipment.
const j2497Word = "Trailer"

// MIDs returns the J1587 MIDs 128..255 from the decoder's name table.
func MIDs() []MIDInfo {
	out := make([]MIDInfo, 0, len(midNames))
	for i, n := range midNames {
		out = append(out, MIDInfo{MID: uint8(FirstJ1587MID + i), Name: n, J2497: strings.Contains(n, j2497Word)})
	}
	return out
}

// J2497MIDs returns the MIDs of units on the J2497 (PLC4TRUCKS) trailer
// link: the MIDs whose assignment names trailer equipment, the same
// table MIDName reads.
func J2497MIDs() []MIDInfo {
	var out []MIDInfo
	for _, m := range MIDs() {
		if m.J2497 {
			out = append(out, m)
		}
	}
	return out
}
