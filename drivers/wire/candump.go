package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"time"
)

// The candump log line, in either shape, chosen per line:
//
//	(1608041700.316550) can0 18FECA00#0102        candump -l
//	(1608041700.316550) can0 18FECA00##30102      candump -l, CAN FD
//	 (000.005001)  can0  18FEDF00   [8]  8A A0 …   candump -ta / -tz / -td
//	 (000.005001)  can0  18FEDF00  [12]  8A A0 …   the same, CAN FD
//
// Hex is accepted in either case and ids may be space-padded. A CAN FD
// line has `##`, one hex digit of flags (CANFD_BRS 1, CANFD_ESI 2; the
// other bits are ignored, since FD is said by the `##`) and up to 64
// data bytes; as in can-utils' parse_canframe (cansend's syntax), a `.`
// may part data bytes. A -l line may end in a direction, R or T, as
// candump -x and asc2log write it. A pretty FD line writes its length in two digits
// and cannot show the flags. AppendCandump writes -l.

// CandumpRecord is one decoded candump line. Interface aliases the line
// given to DecodeCandump and is valid only until that buffer is reused;
// everything else is a copy.
type CandumpRecord struct {
	Time      time.Time
	Interface []byte
	ID        uint32 // with CANEFF/CANRTR/CANERR flag bits
	Len       uint8
	// Flags is 0 for a classic frame, CANFDFDF with CANFDBRS and
	// CANFDESI for a CAN FD one.
	Flags uint8
	// Data holds Len bytes; the bytes past Len are not the frame's.
	Data [MaxCANFDData]byte
}

// Payload returns the data bytes, aliasing r.
func (r *CandumpRecord) Payload() []byte { return r.Data[:r.Len] }

// DecodeCandump parses one line of either shape into r without allocating
// on success. Every field of r is reset.
func DecodeCandump(b []byte, r *CandumpRecord) error {
	if decodeLogLine(b, r) {
		return nil
	}
	return decodeCandump(b, r)
}

// decodeLogLine takes, in one pass, the line candump -l writes and nearly
// every log holds: `(seconds.fraction) interface id#data`, one space
// apart, at most 9 fraction digits, nothing padded, a trailing CR or LF
// allowed. Anything else, errors included, makes it report false, and
// decodeCandump, which reads every shape and words every error, takes the
// line again. FuzzDecodeCandump holds the two to the same records.
//
// The layout candump itself writes, `(%010lu.%06lu)`, an 8-digit id and
// 8 data bytes, is read 8 digits at a time (dec8, nibbles8 and pack8);
// any other length a digit at a time.
func decodeLogLine(b []byte, r *CandumpRecord) bool {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	if len(b) == 0 || b[0] != '(' {
		return false
	}
	sec, ns, i, ok := logTime(b)
	if !ok || i+1 >= len(b) || b[i] != ')' || b[i+1] != ' ' {
		return false
	}
	i += 2
	start := i
	for i < len(b) && b[i] != ' ' && b[i] != '\t' {
		i++
	}
	if i == start || i == len(b) || b[i] != ' ' {
		return false
	}
	iface := b[start:i:i]
	i++
	var id uint32
	digits := 0
	if len(b)-i > extIDDigits && b[i+extIDDigits] == '#' {
		v, ok := nibbles8(binary.LittleEndian.Uint64(b[i:]))
		if !ok {
			return false
		}
		id, digits = bits.ReverseBytes32(pack8(v)), extIDDigits
	} else {
		for ; i+digits < len(b) && unhex[b[i+digits]] != notHex; digits++ {
			id = id<<4 | uint32(unhex[b[i+digits]])
		}
		if digits == 0 || digits > extIDDigits || i+digits == len(b) || b[i+digits] != '#' {
			return false
		}
	}
	switch {
	case digits <= stdIDDigits:
		if id > CANSFFMask {
			return false
		}
	case id&CANERR != 0:
		id &= CANERR | CANErrMask
	case id > CANEFFMask:
		return false
	default:
		id |= CANEFF
	}
	data := b[i+digits+1:]
	n := len(data) / 2
	switch {
	case len(data) == 1 && (data[0] == 'R' || data[0] == 'r'):
		id |= CANRTR
		n = 0
	case len(data)%2 != 0 || n > MaxCANData:
		return false // a CAN FD line (##) too: the general reader takes it
	}
	// Field by field: a record built on the stack and copied stalls on
	// the copy (narrow stores do not forward to wide loads). Only a
	// classic frame's 8 bytes are cleared: the rest are past Len.
	*(*[MaxCANData]byte)(r.Data[:]) = [MaxCANData]byte{}
	switch {
	case n == MaxCANData:
		lo, ok1 := nibbles8(binary.LittleEndian.Uint64(data))
		hi, ok2 := nibbles8(binary.LittleEndian.Uint64(data[8:]))
		if !ok1 || !ok2 {
			return false
		}
		binary.LittleEndian.PutUint32(r.Data[:4], pack8(lo))
		binary.LittleEndian.PutUint32(r.Data[4:], pack8(hi))
	case n > 0:
		// notHex has its high nibble set and no digit has: one test a line.
		var bad byte
		for j := range n {
			h, l := unhex[data[2*j]], unhex[data[2*j+1]]
			bad |= h | l
			r.Data[j] = h<<4 | l
		}
		if bad >= 0x10 {
			return false
		}
	}
	r.Time = time.Unix(sec, ns).UTC()
	r.Interface = iface
	r.ID = id
	r.Len = uint8(n)
	r.Flags = 0
	return true
}

// logTime reads the `(seconds.fraction` that starts b, returning the
// index just past it; ok is false for anything decodeLogLine leaves to
// parseTime, which also takes seconds with no dot and fractions of more
// than 9 digits.
func logTime(b []byte) (sec, ns int64, i int, ok bool) {
	if len(b) > 19 && b[11] == '.' && b[18] == ')' {
		// candump's own (%010lu.%06lu): the word before the microseconds
		// starts with the last second digit and the dot, made "00" to
		// read the six as eight. Other lines can put a dot and a ')' at
		// those places too ("(0) .000000) …"): they go the general way.
		s, ok1 := dec8(binary.LittleEndian.Uint64(b[1:]))
		us, ok2 := dec8(binary.LittleEndian.Uint64(b[10:])&^0xFFFF | 0x3030)
		d9, d10 := b[9]-'0', b[10]-'0'
		if ok1 && ok2 && d9 <= 9 && d10 <= 9 {
			return int64(s)*100 + int64(d9)*10 + int64(d10), int64(us) * 1000, 18, true
		}
	}
	i = 1
	for ; i < len(b) && b[i]-'0' <= 9; i++ {
		sec = sec*10 + int64(b[i]-'0')
	}
	if i == 1 || i > 1+maxSecDigits || i == len(b) || b[i] != '.' {
		return 0, 0, 0, false
	}
	i++
	start := i
	for ; i < len(b) && b[i]-'0' <= 9; i++ {
		ns = ns*10 + int64(b[i]-'0')
	}
	if i-start > 9 {
		return 0, 0, 0, false
	}
	return sec, ns * pow10[9-(i-start)], i, true
}

// pow10[k] scales a fraction of 9-k digits to nanoseconds.
var pow10 = [10]int64{1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9}

// ones repeats a byte over a word: c*ones is c in every byte.
const ones = 0x0101010101010101

// dec8 reads 8 decimal digits, the first in v's low byte, at once (the
// multiply-and-shift steps of simdjson's parse_eight_digits_unrolled).
func dec8(v uint64) (uint32, bool) {
	// Each byte is 0x30 to 0x39: high nibble 3, and adding 6 keeps it 3.
	ok := v&(0xF0*ones)|(v+6*ones)&(0xF0*ones)>>4 == 0x33*ones
	v = (v & (0x0F * ones)) * (1 + 10<<8) >> 8
	v = (v & 0x00FF00FF00FF00FF) * (1 + 100<<16) >> 16
	return uint32((v & 0x0000FFFF0000FFFF) * (1 + 10000<<32) >> 32), ok
}

// nibbles8 maps each byte of v to its hex digit's value; ok is false
// unless every byte is a digit.
func nibbles8(v uint64) (uint64, bool) {
	// A byte below 0x80 is in [lo, hi] when adding 0x80-lo sets its top
	// bit and adding 0x7F-hi does not. A byte from 0x80 up fails (&^ v)
	// whatever its adds carry into its neighbours.
	l := v | 0x20*ones // 'A'-'F' to 'a'-'f'
	digit := (v + 0x50*ones) &^ (v + 0x46*ones)
	letter := (l + 0x1F*ones) &^ (l + 0x19*ones)
	ok := (digit|letter)&^v&(0x80*ones) == 0x80*ones
	return v&(0x0F*ones) + v>>6&ones*9, ok // a letter (bit 6) is its low nibble + 9
}

// pack8 joins 8 nibbles, one a byte, into 4 bytes, the first two
// nibbles in the low byte. It and nibbles8 are two functions so that
// each inlines.
func pack8(n uint64) uint32 {
	n = (n<<4 | n>>8) & 0x00FF00FF00FF00FF
	n = (n | n>>8) & 0x0000FFFF0000FFFF
	return uint32(n | n>>16)
}

// decodeCandump is DecodeCandump for any line: either shape, blanks
// anywhere candump may pad, and an error naming what is wrong.
func decodeCandump(b []byte, r *CandumpRecord) error {
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
		// candump -l -x, and can-utils' asc2log, end a line with the
		// direction: R received, T sent.
		if n := len(rest); n > i+2 && (rest[n-1] == 'R' || rest[n-1] == 'T') && (rest[n-2] == ' ' || rest[n-2] == '\t') {
			rest = bytes.TrimRight(rest[:n-1], " \t")
		}
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
		return decodeFD(id, dataHex[1:], r)
	}
	n, err := decodeData(dataHex, MaxCANData, r)
	if err != nil {
		return err
	}
	r.ID = id
	r.Len = uint8(n)
	return nil
}

// decodeFD reads what follows `id##`: a flags digit and up to 64 bytes.
func decodeFD(id uint32, b []byte, r *CandumpRecord) error {
	if id&CANERR != 0 {
		return errors.New("an error frame is never CAN FD")
	}
	if len(b) == 0 {
		return errors.New("CAN FD frame without its flags digit after ##")
	}
	flags, ok := hexNibble(b[0])
	if !ok {
		return fmt.Errorf("CAN FD flags %q is not a hex digit", b[:1])
	}
	n, err := decodeData(b[1:], MaxCANFDData, r)
	if err != nil {
		return err
	}
	r.ID = id
	r.Len = uint8(n)
	r.Flags = flags&(CANFDBRS|CANFDESI) | CANFDFDF
	return nil
}

// decodeData reads hex data bytes into r.Data, at most limit of them.
// As parse_canframe does, one `.` may come before each byte and one
// after the last.
func decodeData(dataHex []byte, limit int, r *CandumpRecord) (int, error) {
	n := 0
	for i := 0; i < len(dataHex); {
		if dataHex[i] == '.' {
			if i++; i == len(dataHex) {
				break
			}
		}
		if i+1 == len(dataHex) {
			return 0, fmt.Errorf("odd number of hex digits in data %q", dataHex)
		}
		if n == limit {
			return 0, fmt.Errorf("data %q is longer than %d bytes", dataHex, limit)
		}
		v, ok := hexByte(dataHex[i], dataHex[i+1])
		if !ok {
			return 0, fmt.Errorf("data %q is not hex", dataHex)
		}
		r.Data[n] = v
		n++
		i += 2
	}
	return n, nil
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
	n, fd := 0, rb == 3 // candump writes an FD frame's length as [%02d]
	switch {
	case rb == 2 && b[1] >= '0' && b[1] <= '8':
		n = int(b[1] - '0')
	case fd && b[1]-'0' <= 9 && b[2]-'0' <= 9 && int(b[1]-'0')*10+int(b[2]-'0') <= MaxCANFDData:
		n = int(b[1]-'0')*10 + int(b[2]-'0')
	default:
		return fmt.Errorf("dlc %q: want [0] to [%d], or [00] to [%d] for CAN FD", b[:min(len(b), 6)], MaxCANData, MaxCANFDData)
	}
	b = bytes.TrimSpace(b[rb+1:])
	if !fd && bytes.Equal(b, []byte("remote request")) {
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
	if fd {
		if id&CANERR != 0 {
			return errors.New("an error frame is never CAN FD")
		}
		r.Flags = CANFDFDF
	}
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

// maxSecDigits bounds a timestamp's seconds: 12 digits reach year 33658;
// more is garbage, not a time.
const maxSecDigits = 12

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

// AppendCandump appends one candump -l line (with its newline) for a
// classic frame with id (flag bits included) and data, seen at t on iface.
func AppendCandump(dst []byte, t time.Time, iface string, id uint32, data []byte) []byte {
	return AppendCandumpFrame(dst, t, iface, id, 0, data)
}

// AppendCandumpFrame is AppendCandump for either kind of frame: flags
// with CANFDFDF writes a CAN FD line, `id##` and the BRS and ESI bits as
// one hex digit, as candump -l does.
func AppendCandumpFrame(dst []byte, t time.Time, iface string, id uint32, flags uint8, data []byte) []byte {
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
	switch {
	case flags&CANFDFDF != 0:
		dst = append(dst, '#', hexDigits[flags&(CANFDBRS|CANFDESI)])
	case id&CANRTR != 0:
		return append(dst, 'R', '\n')
	}
	for _, b := range data {
		dst = append(dst, hexDigits[b>>4], hexDigits[b&0xF])
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
