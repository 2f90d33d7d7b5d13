package slcan

import "fieldtap/drivers/wire"

// Line sizes of the Lawicel frame format.
const (
	stdIDDigits = 3 // t/r: 11-bit id as 3 hex digits
	extIDDigits = 8 // T/R: 29-bit id as 8 hex digits
	tsDigits    = 4 // optional timestamp: ms as 4 hex digits
	maxData     = 8 // classic CAN payload; slcan has no FD
	// TimestampWrap is where adapter timestamps wrap (DESIGN §8): they
	// count milliseconds 0..59999.
	TimestampWrap = 60_000
	// maxLine is the longest valid line: T, 8 id digits, DLC, 16 data
	// digits, 4 timestamp digits. Anything longer is noise.
	maxLine = 1 + extIDDigits + 1 + 2*maxData + tsDigits
)

// Error reasons in Stats().Errors. Each malformed line counts once, under
// the first fault found.
const (
	ReasonBell      = "bell"            // the adapter answered BELL: a command or frame it refused
	ReasonUnknown   = "unknown_line"    // a line that is not a t/T/r/R frame
	ReasonShort     = "short_line"      // ends before its id and DLC
	ReasonBadHex    = "bad_hex"         // a non-hex digit in id, DLC, data or timestamp
	ReasonDLC       = "dlc_over_8"      // DLC digit 9..F
	ReasonLength    = "length"          // data and timestamp do not match the DLC
	ReasonIDRange   = "id_range"        // an 11-bit id above 0x7FF or a 29-bit id above 0x1FFFFFFF
	ReasonTimestamp = "timestamp"       // a timestamp ≥ TimestampWrap
	ReasonOverlong  = "overlong_line"   // more than maxLine bytes without a CR
	ReasonReorder   = "reordered"       // the adapter's timestamp went backwards within one wrap
	ReasonNotListen = "listen_refused"  // L answered BELL: the port was not opened
	ReasonBitrate   = "bitrate_refused" // S answered BELL: the port was not opened
	ReasonOpen      = "open"            // the tty could not be opened
	ReasonRead      = "read"            // a read failed
)

// LineError is a malformed line; Reason is one of the Reason constants.
type LineError struct{ Reason string }

func (e *LineError) Error() string { return "slcan: " + e.Reason }

// Frame is one parsed frame line. Data aliases nothing: it is a copy.
type Frame struct {
	ID        uint32 // with wire.CANEFF / wire.CANRTR flag bits
	Len       uint8
	Data      [maxData]byte
	Timestamp int // adapter ms 0..59999, or -1 when the line has none
}

// Payload returns the data bytes, aliasing f.
func (f *Frame) Payload() []byte { return f.Data[:f.Len] }

// parseLine parses one frame line (without its CR). It is pure and does not
// allocate.
func parseLine(b []byte) (Frame, error) {
	f := Frame{Timestamp: -1}
	if len(b) == 0 {
		return f, &LineError{ReasonShort}
	}
	digits, ext, rtr := 0, false, false
	switch b[0] {
	case 't':
		digits = stdIDDigits
	case 'T':
		digits, ext = extIDDigits, true
	case 'r':
		digits, rtr = stdIDDigits, true
	case 'R':
		digits, ext, rtr = extIDDigits, true, true
	default:
		return f, &LineError{ReasonUnknown}
	}
	if len(b) < 1+digits+1 {
		return f, &LineError{ReasonShort}
	}
	id, ok := hexValue(b[1 : 1+digits])
	if !ok {
		return f, &LineError{ReasonBadHex}
	}
	dlc, ok := hexValue(b[1+digits : 2+digits])
	if !ok {
		return f, &LineError{ReasonBadHex}
	}
	if dlc > maxData {
		return f, &LineError{ReasonDLC}
	}
	rest := b[2+digits:]
	dataDigits := 2 * int(dlc)
	if rtr {
		dataDigits = 0 // a remote request carries a DLC but no data
	}
	switch len(rest) - dataDigits {
	case 0:
	case tsDigits:
		ts, ok := hexValue(rest[dataDigits:])
		if !ok {
			return f, &LineError{ReasonBadHex}
		}
		if ts >= TimestampWrap {
			return f, &LineError{ReasonTimestamp}
		}
		f.Timestamp = int(ts)
	default:
		return f, &LineError{ReasonLength}
	}
	for i := 0; i < dataDigits; i += 2 {
		v, ok := hexValue(rest[i : i+2])
		if !ok {
			return f, &LineError{ReasonBadHex}
		}
		f.Data[i/2] = byte(v)
	}
	if (!ext && id > wire.CANSFFMask) || (ext && id > wire.CANEFFMask) {
		return f, &LineError{ReasonIDRange}
	}
	f.ID = id
	if ext {
		f.ID |= wire.CANEFF
	}
	if rtr {
		f.ID |= wire.CANRTR
	}
	f.Len = uint8(dlc)
	if rtr {
		f.Len = 0 // SocketCAN keeps the DLC of a remote frame, but carries no bytes
	}
	return f, nil
}

// hexValue reads up to 8 hex digits of either case.
func hexValue(b []byte) (uint32, bool) {
	var v uint32
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		v = v<<4 | uint32(c)
	}
	return v, true
}
