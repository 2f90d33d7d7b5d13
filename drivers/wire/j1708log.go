package wire

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// J1708 message bounds (SAE J1708 §5.2): a MID and a checksum at least,
// 21 bytes with both at most at normal priority.
const (
	MinJ1708Message = 2
	MaxJ1708Message = 21
)

// J1708Line is one line of the J1708 text log:
//
//	(1.688000) j1708 80020028…F4
//
// seconds since the Unix epoch with microseconds, the tag (j2497 for a
// trailer power-line message), the message in hex with its checksum.
type J1708Line struct {
	Time  time.Time
	J2497 bool
	Data  []byte // MID, data, checksum; owned by the caller
}

// ParseJ1708Line parses one log line into owned memory.
func ParseJ1708Line(b []byte) (J1708Line, error) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '(' {
		return J1708Line{}, errors.New("missing (timestamp)")
	}
	end := bytes.IndexByte(b, ')')
	if end < 0 {
		return J1708Line{}, errors.New("unterminated (timestamp)")
	}
	ts, err := parseTime(b[1:end]) // the candump codec's: digits, a dot, digits
	if err != nil {
		return J1708Line{}, err
	}
	fields := bytes.Fields(b[end+1:])
	if len(fields) != 2 {
		return J1708Line{}, errors.New("want `(time) j1708 HEX`")
	}
	var l J1708Line
	switch string(fields[0]) {
	case "j1708":
	case "j2497":
		l.J2497 = true
	default:
		return J1708Line{}, fmt.Errorf("tag %q: want j1708 or j2497", fields[0])
	}
	h := fields[1]
	if len(h)%2 != 0 || len(h)/2 < MinJ1708Message || len(h)/2 > MaxJ1708Message {
		return J1708Line{}, fmt.Errorf("message %q: want %d to %d bytes of hex", h, MinJ1708Message, MaxJ1708Message)
	}
	l.Data = make([]byte, len(h)/2)
	if _, err := hex.Decode(l.Data, h); err != nil {
		return J1708Line{}, fmt.Errorf("message %q is not hex", h)
	}
	l.Time = ts.Round(time.Microsecond)
	return l, nil
}

// AppendJ1708Line appends one log line with its newline; a time before
// the epoch is written as 0.
func AppendJ1708Line(dst []byte, t time.Time, j2497 bool, msg []byte) []byte {
	us := max(t.Round(time.Microsecond).UnixMicro(), 0)
	dst = append(dst, '(')
	dst = strconv.AppendInt(dst, us/1e6, 10)
	dst = append(dst, '.')
	frac := us % 1e6
	for d := int64(1e5); d > 0; d /= 10 {
		dst = append(dst, byte('0'+frac/d%10))
	}
	if j2497 {
		dst = append(dst, ") j2497 "...)
	} else {
		dst = append(dst, ") j1708 "...)
	}
	for _, b := range msg {
		dst = append(dst, hexDigits[b>>4], hexDigits[b&0x0F])
	}
	return append(dst, '\n')
}
