package j1587

import "fieldtap/drivers/wire"

// PID 194 diagnostic-code character bits (J1587 §A, PID 194).
const (
	faultHasCount = 0x80 // an occurrence-count byte follows
	faultInactive = 0x40 // 1: previously active, 0: active now
	faultIsSID    = 0x20 // 1: code is a SID, 0: a PID
	faultPage2    = 0x10 // 1: the code is on page 2 (256 + code)
	faultFMIMask  = 0x0F
)

// Fault is one entry of a PID 194 table.
type Fault struct {
	Code     uint16 // SID or PID, page 2 numbered 256 + x
	IsSID    bool
	FMI      uint8
	Active   bool
	HasCount bool
	Count    uint8 // occurrence count, when HasCount
}

// MaxFaultsPerMessage bounds one table: each entry takes at least two bytes
// of at most wire.MaxJ1708Message-4 (MID, PID, length, checksum).
const MaxFaultsPerMessage = (wire.MaxJ1708Message - 4) / 2

// ParseFaults reads a PID 194 value (length byte already removed) into out
// and returns the entries read. A trailing partial entry yields
// ErrTruncated with the complete entries kept.
func ParseFaults(data []byte, out *[MaxFaultsPerMessage]Fault) (int, error) {
	n := 0
	for i := 0; i < len(data); {
		if i+2 > len(data) || n == len(out) {
			return n, ErrTruncated
		}
		code, c := uint16(data[i]), data[i+1]
		i += 2
		if c&faultPage2 != 0 {
			code += page2Base
		}
		f := Fault{Code: code, IsSID: c&faultIsSID != 0, FMI: c & faultFMIMask, Active: c&faultInactive == 0}
		if c&faultHasCount != 0 {
			if i >= len(data) {
				return n, ErrTruncated
			}
			f.HasCount, f.Count = true, data[i]
			i++
		}
		out[n] = f
		n++
	}
	return n, nil
}
