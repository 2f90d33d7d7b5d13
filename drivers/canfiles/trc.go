package canfiles

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"fieldtap/drivers/wire"
)

// ReadTRC reads a PEAK TRC file of version 1.0 to 2.1 (the
// ;$FILEVERSION line; none is 1.0). Version 1.x lines are "N) offset
// [bus] [type] id [reserved] dlc data…" by version; 2.x lines follow
// ;$COLUMNS (2.0's default N,O,T,I,d,l,D when absent) and their types DT
// (data), RR (remote request), ER (error frame) and the CAN FD types FD,
// FB (BRS), FE (ESI) and BI (both) are read, ST, EC and EV (status, error
// counters, events) as ReasonOther. Offsets are milliseconds from
// ;$STARTTIME (an OLE date, read as UTC) when the file has one. A
// 29-bit id is one written with more than four hex digits, as PEAK
// writes them.
func ReadTRC(r io.Reader, frame func(*Frame) error, bad Bad) error {
	t := trcReader{start: epoch, version: 10, cols: []byte("NOTIdlD")}
	return readLines(r, t.line, &t.f, frame, bad)
}

type trcReader struct {
	version int    // 10 for 1.0 … 21 for 2.1
	cols    []byte // 2.x columns, one letter each
	start   time.Time
	fs      [][]byte
	f       Frame
	data    [64]byte
}

func (t *trcReader) line(line []byte) (bool, error) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return false, nil
	}
	if line[0] == ';' {
		return false, t.header(line[1:])
	}
	t.fs = fields(t.fs, line)
	t.f = Frame{Data: t.data[:0], Channel: 1}
	if t.version >= 20 {
		return t.v2(t.fs)
	}
	return t.v1(t.fs)
}

// header reads the ;$KEY=value lines; other comment lines are skipped.
func (t *trcReader) header(b []byte) error {
	key, val, ok := bytes.Cut(bytes.TrimSpace(b), []byte("="))
	if !ok {
		return nil
	}
	switch string(key) {
	case "$FILEVERSION":
		switch string(bytes.TrimSpace(val)) {
		case "1.1":
			t.version = 11
		case "1.2":
			t.version = 12
		case "1.3":
			t.version = 13
		case "2.0":
			t.version = 20
		case "2.1":
			t.version = 21
		default:
			return fmt.Errorf("$FILEVERSION %.10q: fieldtap reads 1.1 to 2.1", val)
		}
	case "$STARTTIME":
		st, err := oleDays(bytes.TrimSpace(val))
		if err != nil {
			return err
		}
		t.start = st
	case "$COLUMNS":
		cols := bytes.ReplaceAll(bytes.TrimSpace(val), []byte(","), nil)
		if len(cols) == 0 || cols[len(cols)-1] != 'D' || bytes.IndexByte(cols, 'O') < 0 || bytes.IndexByte(cols, 'T') < 0 {
			return fmt.Errorf("$COLUMNS %.40q: no O, T or a last D column", val)
		}
		t.cols = append(t.cols[:0], cols...)
	}
	return nil
}

// v1 reads "N) offset [bus] [Rx|Tx] id [-] dlc data…" (1.0: no bus, no
// direction; 1.1: direction; 1.2: bus and direction; 1.3: and reserved).
func (t *trcReader) v1(fs [][]byte) (bool, error) {
	if len(fs) < 4 || !bytes.HasSuffix(fs[0], []byte(")")) {
		return false, errors.New("not a TRC 1.x message line")
	}
	if err := t.offset(fs[1]); err != nil {
		return false, err
	}
	fs = fs[2:]
	if t.version >= 12 {
		ch, err := strconv.Atoi(string(fs[0]))
		if err != nil {
			return false, fmt.Errorf("bus %.10q", fs[0])
		}
		t.f.Channel, fs = ch, fs[1:]
	}
	if t.version >= 11 {
		if len(fs) == 0 || !isDir(fs[0]) {
			return false, errOther // Warng, Error, bus status lines
		}
		fs = fs[1:]
	}
	if len(fs) < 2 {
		return false, errors.New("no id and length")
	}
	id := fs[0]
	if string(id) == "FFFFFFFF" {
		return false, errOther // 1.0's bus information line
	}
	fs = fs[1:]
	if t.version >= 13 {
		fs = fs[1:] // reserved
	}
	if len(fs) == 0 {
		return false, errors.New("no length")
	}
	return t.frame(id, fs[0], fs[1:], len(fs) > 1 && string(fs[1]) == "RTR")
}

// v2 reads a line by ;$COLUMNS.
func (t *trcReader) v2(fs [][]byte) (bool, error) {
	var typ, id, dlc, length []byte
	var data [][]byte
	for i, c := range t.cols {
		if c == 'D' { // the last column: the rest of the line, maybe empty
			data = fs[min(i, len(fs)):]
			break
		}
		if i >= len(fs) {
			return false, fmt.Errorf("%d fields for columns %s", len(fs), t.cols)
		}
		v := fs[i]
		switch c {
		case 'O':
			if err := t.offset(v); err != nil {
				return false, err
			}
		case 'T':
			typ = v
		case 'B':
			ch, err := strconv.Atoi(string(v))
			if err != nil {
				return false, fmt.Errorf("bus %.10q", v)
			}
			t.f.Channel = ch
		case 'I':
			id = v
		case 'L':
			dlc = v
		case 'l':
			length = v
		}
	}
	switch string(typ) {
	case "DT":
	case "RR":
		if dlc == nil {
			dlc = length
		}
		return t.frame(id, dlc, nil, true)
	case "ER":
		t.f.setError()
		return true, nil
	case "FD", "FB", "FE", "BI":
		return t.fd(string(typ), id, dlc, length, data)
	case "ST", "EC", "EV", "ES":
		return false, errOther
	default:
		return false, fmt.Errorf("message type %.10q", typ)
	}
	if length == nil {
		length = dlc
	}
	return t.frame(id, length, data, false)
}

// fd fills t.f from a CAN FD line (FB: BRS set, FE: ESI set, BI: both):
// its data length is the length column when there is one, else what its
// DLC column (a hex digit) codes.
func (t *trcReader) fd(typ string, idb, dlcb, lenb []byte, data [][]byte) (bool, error) {
	if idb == nil || dlcb == nil && lenb == nil {
		return false, errors.New("no id or length column")
	}
	ext := len(idb) > 4
	id, err := parseID(idb, 16, ext)
	if err != nil {
		return false, err
	}
	n := -1
	if lenb != nil {
		v, err := parseUint(lenb, 10, 8)
		if err != nil || v > 64 {
			return false, fmt.Errorf("CAN FD length %.10q", lenb)
		}
		n = int(v)
	}
	dlc := -1
	if dlcb != nil {
		v, err := parseUint(dlcb, 16, 4) // one hex digit, 0 to F
		if err != nil {
			return false, fmt.Errorf("CAN FD DLC %.10q", dlcb)
		}
		dlc = int(v)
	}
	if n < 0 {
		n = fdLen(dlc)
	}
	if dlc < 0 {
		dlc = wire.CANFDDLC(n)
	}
	t.f.setID(id, ext, false)
	t.f.setFD(typ == "FB" || typ == "BI", typ == "FE" || typ == "BI")
	t.f.DLC = uint8(dlc)
	t.f.Data, err = parseData(t.f.Data, data, n, 16)
	return err == nil, err
}

// fdLen is the data length a CAN FD DLC codes.
func fdLen(dlc int) int {
	if dlc <= 8 {
		return dlc
	}
	return fdLens[dlc-9]
}

var fdLens = [...]int{12, 16, 20, 24, 32, 48, 64}

// frame fills t.f from an id, a length and its data fields.
func (t *trcReader) frame(idb, lenb []byte, data [][]byte, rtr bool) (bool, error) {
	if idb == nil || lenb == nil {
		return false, errors.New("no id or length column")
	}
	ext := len(idb) > 4
	id, err := parseID(idb, 16, ext)
	if err != nil {
		return false, err
	}
	n, err := parseUint(lenb, 10, 8)
	if err != nil || n > 15 {
		return false, fmt.Errorf("length %.10q", lenb)
	}
	if n > 8 {
		return false, fmt.Errorf("length %d on a classic CAN frame", n)
	}
	t.f.setID(id, ext, rtr)
	t.f.DLC = uint8(n)
	if rtr {
		return true, nil
	}
	t.f.Data, err = parseData(t.f.Data, data, int(n), 16)
	return err == nil, err
}

func (t *trcReader) offset(b []byte) error {
	off, err := parseDecimal(b, time.Millisecond)
	if err != nil {
		return err
	}
	t.f.Offset, t.f.Time = off, t.start.Add(off)
	return nil
}
