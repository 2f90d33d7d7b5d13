package canfiles

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"

	"fieldtap/drivers/capture"
)

// maxLine bounds one text line. An ASC CAN FD line with its 64 data
// bytes and bit timing fields is under 400 bytes; 1024 leaves room for
// symbolic names while keeping a garbage file from growing the buffer.
const maxLine = 1024

// bom is the UTF-8 byte order mark Windows tools may start a text file
// with.
var bom = []byte("\xEF\xBB\xBF")

// errOther is what a text reader's line parser returns for a line that is
// not a CAN frame (statistics, status, markers): ReasonOther, not
// malformed.
var errOther = errors.New("not a CAN frame")

// readLines reads the text file r a line at a time for one format's
// reader: an overlong line is ReasonOverlong, the first line loses a byte
// order mark, and parse reads each line into f. A line parse reads as a
// frame (ok) goes to frame; errOther from parse is ReasonOther, another
// error ReasonMalformed. It returns frame's first error, or a read error.
func readLines(r io.Reader, parse func(line []byte) (ok bool, err error), f *Frame, frame func(*Frame) error, bad Bad) error {
	return capture.ReadLines(r, maxLine, func(n int, line []byte, overlong bool) error {
		if overlong {
			bad(int64(n), ReasonOverlong, nil)
			return nil
		}
		if n == 1 {
			line = bytes.TrimPrefix(line, bom)
		}
		ok, err := parse(line)
		switch {
		case errors.Is(err, errOther):
			bad(int64(n), ReasonOther, nil)
		case err != nil:
			bad(int64(n), ReasonMalformed, err)
		case ok:
			return frame(f)
		}
		return nil
	})
}

// maxFields bounds the fields of one line a reader splits: a CAN FD line
// has at most 64 data bytes and a dozen others.
const maxFields = 96

// fields splits line at blanks into dst (reused), at most maxFields.
func fields(dst [][]byte, line []byte) [][]byte {
	dst = dst[:0]
	for len(line) > 0 && len(dst) < maxFields {
		i := 0
		for i < len(line) && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r') {
			i++
		}
		line = line[i:]
		j := 0
		for j < len(line) && line[j] != ' ' && line[j] != '\t' && line[j] != '\r' {
			j++
		}
		if j > 0 {
			dst = append(dst, line[:j])
		}
		line = line[j:]
	}
	return dst
}

// maxOffset bounds a frame's offset from its file's start: a century,
// far past any log, short of time.Duration's overflow.
const maxOffset = 100 * 365 * 24 * time.Hour

var errTime = errors.New("not a time offset")

// parseDecimal reads an unsigned decimal number such as 1059.900 in
// units of unit, exactly to the nanosecond (digits past that are cut).
func parseDecimal(b []byte, unit time.Duration) (time.Duration, error) {
	whole, frac, _ := bytes.Cut(b, []byte("."))
	if len(whole) == 0 && len(frac) == 0 || len(whole) > 15 {
		return 0, fmt.Errorf("%w: %.20q", errTime, b)
	}
	var w int64
	for _, c := range whole {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("%w: %.20q", errTime, b)
		}
		w = w*10 + int64(c-'0')
	}
	if w > int64(maxOffset/unit) {
		return 0, fmt.Errorf("%w: %.20q is past a century", errTime, b)
	}
	var f, scale int64 = 0, 1
	for i, c := range frac {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("%w: %.20q", errTime, b)
		}
		if i < 9 {
			f, scale = f*10+int64(c-'0'), scale*10
		}
	}
	return time.Duration(w)*unit + time.Duration(f*int64(unit)/scale), nil
}

// parseUint reads an unsigned number in base 10 or 16 that fits bits.
func parseUint(b []byte, base, bits int) (uint64, error) {
	if len(b) == 0 || len(b) > 20 {
		return 0, fmt.Errorf("%.20q is not a number", b)
	}
	v, err := strconv.ParseUint(string(b), base, bits)
	if err != nil {
		return 0, fmt.Errorf("%.20q is not a %d-bit number in base %d", b, bits, base)
	}
	return v, nil
}

// parseID reads a CAN identifier and checks it fits its kind.
func parseID(b []byte, base int, ext bool) (uint32, error) {
	v, err := parseUint(b, base, 32)
	if err != nil {
		return 0, err
	}
	if ext && v > 0x1FFFFFFF || !ext && v > 0x7FF {
		return 0, fmt.Errorf("id %.20q too large for a %s frame", b, map[bool]string{true: "29-bit", false: "11-bit"}[ext])
	}
	return uint32(v), nil
}

// parseData reads n data bytes from fs in base into dst.
func parseData(dst []byte, fs [][]byte, n, base int) ([]byte, error) {
	if len(fs) < n {
		return dst, fmt.Errorf("%d data bytes for a length of %d", len(fs), n)
	}
	for _, f := range fs[:n] {
		v, err := parseUint(f, base, 8)
		if err != nil {
			return dst, fmt.Errorf("data byte: %w", err)
		}
		dst = append(dst, byte(v))
	}
	return dst, nil
}

// oleDays turns an OLE automation date (days since 1899-12-30, as TRC's
// $STARTTIME writes it) into a time, read as UTC.
func oleDays(b []byte) (time.Time, error) {
	v, err := strconv.ParseFloat(string(b), 64)
	if err != nil || v < 0 || v > 2958465 || math.IsNaN(v) { // 2958465: 9999-12-31
		return time.Time{}, fmt.Errorf("$STARTTIME %.30q is not a day count", b)
	}
	days := math.Floor(v)
	us := math.Round((v - days) * 86400e6)
	return time.Date(1899, 12, 30, 0, 0, 0, 0, time.UTC).AddDate(0, 0, int(days)).Add(time.Duration(us) * time.Microsecond), nil
}
