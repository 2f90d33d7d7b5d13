package j1587

import (
	"errors"
	"fieldtap/drivers/wire"
)

// maxParams bounds the parameters of one message: every parameter takes at
// least one byte of the data between MID and checksum.
const maxParams = wire.MaxJ1708Message - wire.MinJ1708Message

// FirstJ1587MID is the lowest MID whose data is J1587 parameters; 0-127 are
// J1708-reserved layouts this package does not interpret.
const FirstJ1587MID = 128

// PID layout bounds, page-relative (J1587 §A.1): 0-127 carry one byte,
// 128-191 two, 192-253 a length byte and that many bytes, 254 the rest of
// the message; 255 is the page-extension prefix (the next byte is a PID on
// page 2, numbered 256 + x here).
const (
	firstTwoByte  = 128
	firstVariable = 192
	pidRestOfMsg  = 254
	pidPage2      = 255
	page2Base     = 256
	// MaxPID is one past the highest PID this package numbers (page 2).
	MaxPID = 2 * page2Base
)

// Decode errors. They are values, so a failing Decode does not allocate.
var (
	ErrLength    = errors.New("j1587: message length outside 2..21 bytes")
	ErrChecksum  = errors.New("j1587: checksum does not sum to zero")
	ErrNotJ1587  = errors.New("j1587: MID below 128 is a J1708-reserved layout")
	ErrTruncated = errors.New("j1587: parameter runs past the end of the message")
	ErrPage      = errors.New("j1587: page-extension PID 255 followed by 255")
)

// Param is one parameter of a message. Data is the value bytes (without a
// length byte) and aliases the decoded message.
type Param struct {
	PID  uint16 // 0-511; page-2 PIDs are 256 + their page-relative number
	Data []byte
}

// Decoder splits a message into parameters. The zero value is ready; reuse
// one per goroutine. Decode resets every field.
type Decoder struct {
	MID    byte
	Params []Param // aliases the Decoder's own array and the message
	arr    [maxParams]Param
}

// Checksum reports whether msg's bytes sum to 0 mod 256.
func Checksum(msg []byte) bool {
	var s byte
	for _, b := range msg {
		s += b
	}
	return s == 0
}

// Decode splits msg (MID, data, checksum) into parameters. On an error
// Params holds the parameters decoded before the fault; MID is set
// whenever msg has one.
func (d *Decoder) Decode(msg []byte) error {
	d.MID, d.Params = 0, d.arr[:0]
	if len(msg) < wire.MinJ1708Message || len(msg) > wire.MaxJ1708Message {
		return ErrLength
	}
	d.MID = msg[0]
	if !Checksum(msg) {
		return ErrChecksum
	}
	if d.MID < FirstJ1587MID {
		return ErrNotJ1587
	}
	body := msg[1 : len(msg)-1]
	for i := 0; i < len(body); {
		var base uint16
		p := body[i]
		i++
		if p == pidPage2 {
			if i >= len(body) {
				return ErrTruncated
			}
			base, p = page2Base, body[i]
			i++
			if p == pidPage2 {
				return ErrPage
			}
		}
		var n int
		switch {
		case p < firstTwoByte:
			n = 1
		case p < firstVariable:
			n = 2
		case p == pidRestOfMsg:
			n = len(body) - i
		default:
			if i >= len(body) {
				return ErrTruncated
			}
			n = int(body[i])
			i++
		}
		if i+n > len(body) {
			return ErrTruncated
		}
		// len(body) ≤ maxParams and each parameter takes ≥ 1 byte, so the
		// array cannot overflow.
		d.Params = append(d.Params, Param{PID: base + uint16(p), Data: body[i : i+n : i+n]})
		i += n
	}
	return nil
}

// Has reports whether the last decoded message carries pid.
func (d *Decoder) Has(pid uint16) bool {
	for _, p := range d.Params {
		if p.PID == pid {
			return true
		}
	}
	return false
}
