package canfiles

import (
	"time"

	"fieldtap/drivers/wire"
)

// Frame is one frame a reader read. The reader reuses it: copy what you
// keep.
type Frame struct {
	// Time is the file's start plus Offset, or Offset from the Unix epoch
	// when the file states no start (see the package comment).
	Time   time.Time
	Offset time.Duration
	// ID carries wire's flag bits: CANEFF for a 29-bit id, CANRTR for a
	// remote request, CANERR for an error frame (whose class bits are left
	// zero: the vendors' error codes are not SocketCAN's classes).
	ID uint32
	// DLC is the length code the file gave; Data is empty for a remote
	// request and an error frame.
	DLC  uint8
	Data []byte
	// Flags is wire's CAN FD flags byte: CANFDFDF for a CAN FD frame, with
	// CANFDBRS and CANFDESI as the file gives them; zero for a classic one.
	Flags uint8
	// Channel is the file's channel or bus number as it writes it (ASC,
	// BLF and TRC count from 1, SavvyCAN's bus from 0).
	Channel int
}

// Reasons a record is not read as a frame. The port counts each as an
// error reason; the daemon's coverage reports ReasonMalformed,
// ReasonOverlong and ReasonContainer as CAN traffic not
// analysed. ReasonOther is a record that is not a CAN frame at all (bus
// statistics, chip status, markers, comments among frames, other buses'
// objects): counted, not traffic lost.
const (
	ReasonMalformed = "malformed_record"
	ReasonOverlong  = "overlong_log_line"
	ReasonContainer = "blf_container_unreadable"
	ReasonOther     = "other_record"
)

// Bad is told of a record not read: where (a line number for text files,
// a byte offset in the file or in the uncompressed object stream for
// BLF), why (a Reason) and, for a malformed record, what was wrong.
type Bad func(at int64, reason string, err error)

// epoch is the start of a file that states none.
var epoch = time.Unix(0, 0).UTC()

// setID fills f's id from a bare identifier and its kind.
func (f *Frame) setID(id uint32, ext, rtr bool) {
	if ext {
		id = id&wire.CANEFFMask | wire.CANEFF
	} else {
		id &= wire.CANSFFMask
	}
	if rtr {
		id |= wire.CANRTR
	}
	f.ID = id
}

const rtrFlag = wire.CANRTR

// setFD marks f a CAN FD frame, with a bit rate switch and an error
// state indicator as the file says.
func (f *Frame) setFD(brs, esi bool) {
	f.Flags = wire.CANFDFDF
	if brs {
		f.Flags |= wire.CANFDBRS
	}
	if esi {
		f.Flags |= wire.CANFDESI
	}
}

// setError makes f an error frame: CANERR with no class bits and no data.
func (f *Frame) setError() {
	f.ID, f.DLC, f.Data = wire.CANERR, 0, f.Data[:0]
}
