package wire

import (
	"bytes"
	"errors"
	"fmt"
	"time"
)

// The candump log line, in either shape, chosen per line:
//
//	(1608041700.316550) can0 18FECA00#0102        candump -l
//	 (000.005001)  can0  18FEDF00   [8]  8A A0 …   candump -ta / -tz / -td
//
// Hex is accepted in either case and ids may be space-padded.
// AppendCandump writes -l.

// CandumpRecord is one decoded candump line. Interface aliases the line
// given to DecodeCandump and is valid only until that buffer is reused;
// everything else is a copy.
type CandumpRecord struct {
	Time      time.Time
	Interface []byte
	ID        uint32 // with CANEFF/CANRTR/CANERR flag bits
	Len       uint8
	Data      [MaxCANData]byte
}

// Payload returns the data bytes, aliasing r.
func (r *CandumpRecord) Payload() []byte { return r.Data[:r.Len] }

// DecodeCandump parses one line of either shape into r without allocating
// on success. Every field of r is reset.
func DecodeCandump(b []byte, r *CandumpRecord) error {
	*r = CandumpRecord{}
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '(' {
		return errors.New("missing (timestamp)")
	}
	end := bytes.IndexByte(b, ')')
	if end < 0 {
		return errors.New("unterminated (timestamp)")
	}
	ts, err := parseTime(b[1:end])
	if err != nil {
		return err
	}
	r.Time = ts
	rest := trimBlanks(b[end+1:])
	sp := indexBlank(rest)
	if sp <= 0 {
		return errors.New("want `(time) interface id#data` or `(time) interface id [n] bytes`")
	}
	r.Interface = rest[:sp]
	rest = trimBlanks(rest[sp:])
	if i := bytes.IndexByte(rest, '#'); i >= 0 {
		return decodeLog(rest, i, r)
	}
	return decodePretty(rest, r)
}

// decodeLog reads `ID#DATA` (also `ID#R` for a remote frame). A blank
// fails the hex reads below, so it is looked for only to say why.
func decodeLog(b []byte, hash int, r *CandumpRecord) error {
	err := decodeLogFields(b, hash, r)
	if err != nil && indexBlank(b) >= 0 {
		return errors.New("want exactly `(time) interface id#data`")
	}
	return err
}

func decodeLogFields(b []byte, hash int, r *CandumpRecord) error {
	id, err := parseID(b[:hash])
	if err != nil {
		return err
	}
	dataHex := b[hash+1:]
	switch {
	case len(dataHex) > 0 && (dataHex[0] == 'R' || dataHex[0] == 'r'):
		if indexBlank(dataHex) >= 0 {
			return errors.New("blank after the remote request")
		}
		r.ID = id | CANRTR
		return nil
	case len(dataHex) > 0 && dataHex[0] == '#':
		return errors.New("CAN FD frames are not supported")
	}
	if len(dataHex)%2 != 0 {
		return fmt.Errorf("odd number of hex digits in data %q", dataHex)
	}
	if len(dataHex)/2 > MaxCANData {
		return fmt.Errorf("data %q is longer than %d bytes", dataHex, MaxCANData)
	}
	for i := 0; i < len(dataHex); i += 2 {
		v, ok := hexByte(dataHex[i], dataHex[i+1])
		if !ok {
			return fmt.Errorf("data %q is not hex", dataHex)
		}
		r.Data[i/2] = v
	}
	r.ID = id
	r.Len = uint8(len(dataHex) / 2)
	return nil
}

// decodePretty reads `ID   [n]  B0 B1 …` (or `[n]  remote request`).
func decodePretty(b []byte, r *CandumpRecord) error {
	sp := indexBlank(b)
	if sp <= 0 {
		return errors.New("want `id [n] bytes` after the interface")
	}
	id, err := parseID(b[:sp])
	if err != nil {
		return err
	}
	b = trimBlanks(b[sp:])
	if len(b) < 3 || b[0] != '[' {
		return errors.New("missing [dlc]")
	}
	rb := bytes.IndexByte(b, ']')
	if rb != 2 || b[1] < '0' || b[1] > '8' {
		return fmt.Errorf("dlc %q: want [0] to [%d]", b[:min(len(b), 6)], MaxCANData)
	}
	n := int(b[1] - '0')
	b = bytes.TrimSpace(b[rb+1:])
	if bytes.Equal(b, []byte("remote request")) {
		// A remote frame carries no data; -l cannot keep its DLC either.
		r.ID = id | CANRTR
		return nil
	}
	got := 0
	for len(b) > 0 {
		if got == n || len(b) < 2 || (len(b) > 2 && b[2] != ' ' && b[2] != '\t') {
			return fmt.Errorf("data does not match [%d]", n)
		}
		v, ok := hexByte(b[0], b[1])
		if !ok {
			return fmt.Errorf("data byte %q is not hex", b[:2])
		}
		r.Data[got] = v
		got++
		b = trimBlanks(b[2:])
	}
	if got != n {
		return fmt.Errorf("[%d] announced but %d data bytes", n, got)
	}
	r.ID = id
	r.Len = uint8(n)
	return nil
}

// indexBlank is bytes.IndexAny(b, " \t") without building a set per call:
// this runs several times per line of a multi-million-line log.
func indexBlank(b []byte) int {
	for i, c := range b {
		if c == ' ' || c == '\t' {
			return i
		}
	}
	return -1
}

// trimBlanks is bytes.TrimLeft(b, " \t").
func trimBlanks(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	return b
}

// parseTime reads `seconds[.fraction]` without allocating, in one pass.
func parseTime(b []byte) (time.Time, error) {
	// 12 digits of seconds reach year 33658; more is garbage, not a time.
	const maxSecDigits = 12
	var s int64
	i := 0
	for ; i < len(b) && b[i] != '.'; i++ {
		d := b[i] - '0'
		if d > 9 || i == maxSecDigits {
			return time.Time{}, fmt.Errorf("timestamp %q is not seconds", b)
		}
		s = s*10 + int64(d)
	}
	if i == 0 {
		return time.Time{}, fmt.Errorf("timestamp %q is not seconds", b)
	}
	var ns int64
	digits := 0
	if i < len(b) {
		for _, c := range b[i+1:] {
			d := c - '0'
			if d > 9 {
				return time.Time{}, fmt.Errorf("timestamp %q has a bad fraction", b)
			}
			if digits < 9 {
				ns = ns*10 + int64(d)
				digits++
			}
		}
	}
	for ; digits < 9; digits++ {
		ns *= 10
	}
	return time.Unix(s, ns).UTC(), nil
}

// stdIDDigits is the most hex digits of an 11-bit id. can-utils writes
// exactly 3, but logs from other tools drop leading zeros ("64#…"); like
// python-can's reader, up to 3 digits mean 11-bit and 4 to 8 mean 29-bit.
const (
	stdIDDigits = 3
	extIDDigits = 8
)

// parseID reads an 11-bit or 29-bit hex id.
func parseID(b []byte) (uint32, error) {
	if len(b) == 0 || len(b) > extIDDigits {
		return 0, fmt.Errorf("id %q: want up to 3 hex digits (11-bit) or 4 to 8 (29-bit)", b)
	}
	var id uint32
	for _, c := range b {
		v, ok := hexNibble(c)
		if !ok {
			return 0, fmt.Errorf("id %q is not hex", b)
		}
		id = id<<4 | uint32(v)
	}
	if len(b) > stdIDDigits {
		if id&CANERR != 0 {
			// candump writes an error frame's id as can_id & (CAN_ERR_FLAG |
			// CAN_ERR_MASK); other flag bits in the text mean nothing.
			return id & (CANERR | CANErrMask), nil
		}
		if id > CANEFFMask {
			return 0, fmt.Errorf("id %q exceeds 29 bits", b)
		}
		return id | CANEFF, nil
	}
	if id > CANSFFMask {
		return 0, fmt.Errorf("id %q exceeds 11 bits", b)
	}
	return id, nil
}

// unhex maps a hex digit, either case, to its value and anything else
// to notHex: one load a digit instead of three range tests.
var unhex = func() (t [256]byte) {
	for i := range t {
		t[i] = notHex
	}
	for i, c := range "0123456789abcdef" {
		t[c] = byte(i)
	}
	for i, c := range "ABCDEF" {
		t[c] = byte(10 + i)
	}
	return t
}()

const notHex = 0xFF

func hexNibble(c byte) (byte, bool) {
	v := unhex[c]
	return v, v != notHex
}

func hexByte(hi, lo byte) (byte, bool) {
	h, l := unhex[hi], unhex[lo]
	return h<<4 | l, h != notHex && l != notHex
}

const hexDigits = "0123456789ABCDEF"

// AppendCandump appends one candump -l line (with its newline) for a frame
// with id (flag bits included) and data, seen at t on iface.
func AppendCandump(dst []byte, t time.Time, iface string, id uint32, data []byte) []byte {
	dst = append(dst, '(')
	dst = appendTime(dst, t)
	dst = append(dst, ") "...)
	dst = append(dst, iface...)
	dst = append(dst, ' ')
	switch {
	case id&CANERR != 0:
		dst = appendHex(dst, uint64(id&(CANERR|CANErrMask)), 8)
	case id&CANEFF != 0:
		dst = appendHex(dst, uint64(id&CANEFFMask), 8)
	default:
		dst = appendHex(dst, uint64(id&CANSFFMask), 3)
	}
	dst = append(dst, '#')
	if id&CANRTR != 0 {
		dst = append(dst, 'R')
	} else {
		for _, b := range data {
			dst = append(dst, hexDigits[b>>4], hexDigits[b&0xF])
		}
	}
	return append(dst, '\n')
}

func appendTime(dst []byte, t time.Time) []byte {
	s, us := t.Unix(), t.Nanosecond()/1000
	if s < 0 {
		s, us = 0, 0
	}
	var buf [20]byte
	i := len(buf)
	for {
		i--
		buf[i] = byte('0' + s%10)
		s /= 10
		if s == 0 {
			break
		}
	}
	dst = append(dst, buf[i:]...)
	dst = append(dst, '.')
	for d := 100000; d > 0; d /= 10 {
		dst = append(dst, byte('0'+us/d%10))
	}
	return dst
}

func appendHex(dst []byte, v uint64, digits int) []byte {
	for i := digits - 1; i >= 0; i-- {
		dst = append(dst, hexDigits[(v>>(4*i))&0xF])
	}
	return dst
}
