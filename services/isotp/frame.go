package isotp

import (
	"errors"
	"fmt"
)

// Frame types: the high nibble of the first byte (ISO 15765-2 §9.6).
const (
	TypeSingle      = 0
	TypeFirst       = 1
	TypeConsecutive = 2
	TypeFlowControl = 3
)

// Classic-CAN sizes.
const (
	FrameSize = 8 // a classic CAN data field
	// MaxSingle is what a single frame carries after its PCI byte.
	MaxSingle = FrameSize - 1
	// firstData and consData are the payload bytes in a first and a
	// consecutive frame.
	firstData = FrameSize - 2
	consData  = FrameSize - 1
	// MaxPayload is the 12-bit first-frame length limit; the 32-bit escape
	// (FF_DL = 0) is for CAN FD sizes no request here needs.
	MaxPayload = 4095
	// DefaultPad fills unused bytes so every frame has DLC 8: many ECUs
	// ignore a shorter frame. 0xAA keeps bit-stuffing low.
	DefaultPad = 0xAA
)

// Flow status values of a flow-control frame.
const (
	FlowContinue = 0 // clear to send
	FlowWait     = 1
	FlowOverflow = 2
)

// Frame is one decoded ISO-TP frame. Data aliases the input.
type Frame struct {
	Type int
	// Length is the payload length announced by a single or first frame.
	Length int
	// Seq is a consecutive frame's 4-bit sequence number.
	Seq int
	// Data is the payload carried by this frame (single: exactly Length bytes).
	Data []byte
	// Flow control fields.
	Status    int
	BlockSize int
	STmin     byte
}

// Errors returned by Parse and the Reassembler.
var (
	ErrShort    = errors.New("isotp: frame too short")
	ErrBadPCI   = errors.New("isotp: unknown protocol control information")
	ErrSequence = errors.New("isotp: consecutive frame out of sequence")
	ErrTooLong  = errors.New("isotp: payload longer than 4095 bytes")
)

// Parse decodes one CAN data field. It never panics; a field the standard
// does not allow is an error naming why.
func Parse(b []byte) (Frame, error) { return parse(b, FrameSize) }

// parse decodes the protocol part of a data field whose room is size
// bytes: FrameSize for normal addressing, one less when an address byte
// comes first (extended addressing).
func parse(b []byte, size int) (Frame, error) {
	if len(b) < 1 {
		return Frame{}, ErrShort
	}
	f := Frame{Type: int(b[0] >> 4)}
	switch f.Type {
	case TypeSingle:
		f.Length = int(b[0] & 0x0F)
		if f.Length == 0 || f.Length > size-1 {
			return f, fmt.Errorf("%w: single frame length %d", ErrBadPCI, f.Length)
		}
		if len(b) < 1+f.Length {
			return f, ErrShort
		}
		f.Data = b[1 : 1+f.Length]
	case TypeFirst:
		if len(b) < size {
			return f, ErrShort
		}
		f.Length = int(b[0]&0x0F)<<8 | int(b[1])
		if f.Length <= size-1 {
			return f, fmt.Errorf("%w: first frame length %d fits a single frame", ErrBadPCI, f.Length)
		}
		f.Data = b[2:size]
	case TypeConsecutive:
		if len(b) < 2 {
			return f, ErrShort
		}
		f.Seq = int(b[0] & 0x0F)
		f.Data = b[1:]
	case TypeFlowControl:
		if len(b) < 3 {
			return f, ErrShort
		}
		f.Status = int(b[0] & 0x0F)
		if f.Status > FlowOverflow {
			return f, fmt.Errorf("%w: flow status %d", ErrBadPCI, f.Status)
		}
		f.BlockSize, f.STmin = int(b[1]), b[2]
	default:
		return f, fmt.Errorf("%w: type %d", ErrBadPCI, f.Type)
	}
	return f, nil
}

// Segment splits payload into the frames a sender transmits: one single
// frame, or a first frame and its consecutive frames (sent after the
// receiver's flow control). With pad, every frame is FrameSize bytes.
func Segment(payload []byte, pad bool) ([][]byte, error) {
	n := len(payload)
	switch {
	case n == 0:
		return nil, errors.New("isotp: empty payload")
	case n > MaxPayload:
		return nil, ErrTooLong
	case n <= MaxSingle:
		f := append([]byte{byte(n)}, payload...)
		return [][]byte{padTo(f, pad)}, nil
	}
	frames := [][]byte{append([]byte{TypeFirst<<4 | byte(n>>8), byte(n)}, payload[:firstData]...)}
	seq := 1
	for off := firstData; off < n; off += consData {
		end := min(off+consData, n)
		f := append([]byte{TypeConsecutive<<4 | byte(seq&0x0F)}, payload[off:end]...)
		frames = append(frames, padTo(f, pad))
		seq++
	}
	return frames, nil
}

// FlowControl is the frame a receiver sends after a first frame.
// blockSize 0 means "send everything"; stMin is the separation time byte
// (0x00–0x7F milliseconds, 0xF1–0xF9 hundreds of microseconds).
func FlowControl(status, blockSize int, stMin byte, pad bool) []byte {
	return padTo([]byte{TypeFlowControl<<4 | byte(status&0x0F), byte(blockSize), stMin}, pad)
}

// STminMicros converts a separation-time byte to microseconds; reserved
// values count as the maximum 127 ms, as ISO 15765-2 tells a sender to.
func STminMicros(b byte) int {
	switch {
	case b <= 0x7F:
		return int(b) * 1000
	case b >= 0xF1 && b <= 0xF9:
		return int(b-0xF0) * 100
	}
	return 127_000
}

func padTo(f []byte, pad bool) []byte {
	for pad && len(f) < FrameSize {
		f = append(f, DefaultPad)
	}
	return f
}
