package canfiles

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"
)

// ReadASC reads a Vector ASC file: its date, base and timestamps header
// lines, Begin Triggerblock lines, and event lines of which CAN frames,
// remote frames and ErrorFrame lines are read, and CANFD lines: as CAN FD
// frames (with their BRS and ESI) when their flags say so (EDL set), as
// classic frames otherwise. Other events (statistics, chip status, J1939 TP
// lines, markers) are ReasonOther. Offsets are from the measurement start
// (the latest Begin Triggerblock's date, else the date line), summed when
// the header says "timestamps relative".
func ReadASC(r io.Reader, frame func(*Frame) error, bad Bad) error {
	a := ascReader{base: 16, start: epoch}
	return readLines(r, a.line, &a.f, frame, bad)
}

type ascReader struct {
	base     int
	relative bool // "timestamps relative": each from the event before
	start    time.Time
	last     time.Duration
	fs       [][]byte
	f        Frame
	data     [64]byte
}

// line reads one line: ok when it is a frame (in a.f), errOther for an
// event not read, another error for a line that is malformed.
func (a *ascReader) line(line []byte) (ok bool, err error) {
	a.fs = fields(a.fs, line)
	fs := a.fs
	if len(fs) == 0 || bytes.HasPrefix(fs[0], []byte("//")) {
		return false, nil
	}
	if fs[0][0] < '0' || fs[0][0] > '9' {
		return false, a.header(fs)
	}
	off, err := parseDecimal(fs[0], time.Second)
	if err != nil {
		return false, err
	}
	if a.relative {
		off += a.last
		if off > maxOffset {
			return false, errors.New("relative timestamps summed past a century")
		}
	}
	a.last = off
	f := &a.f
	*f = Frame{Offset: off, Time: a.start.Add(off), Data: a.data[:0]}
	if len(fs) < 2 {
		return false, errOther
	}
	if string(fs[1]) == "CANFD" {
		return a.fd(fs[2:])
	}
	ch, err := strconv.Atoi(string(fs[1]))
	if err != nil || ch < 0 || len(fs) < 3 {
		return false, errOther // "Start of measurement", "CAN 1 Status:…", J1939TP, Statistic:
	}
	f.Channel = ch
	if bytes.EqualFold(fs[2], []byte("ErrorFrame")) {
		f.setError()
		return true, nil
	}
	if len(fs) < 5 || !isDir(fs[3]) {
		return false, errOther
	}
	if err := a.id(fs[2]); err != nil {
		return false, err
	}
	switch string(fs[4]) {
	case "r", "R":
		f.ID |= rtrFlag
		if len(fs) > 5 {
			if dlc, err := parseUint(fs[5], 16, 4); err == nil {
				f.DLC = uint8(dlc)
			}
		}
		return true, nil
	case "d", "D":
	default:
		return false, fmt.Errorf("frame type %.10q: want d or r", fs[4])
	}
	if len(fs) < 6 {
		return false, errors.New("no length code")
	}
	dlc, err := parseUint(fs[5], a.base, 8)
	if err != nil {
		return false, fmt.Errorf("length code %.10q", fs[5])
	}
	if dlc > 15 {
		return false, fmt.Errorf("length code %d on a classic CAN line", dlc)
	}
	// A classic DLC of 9 to 15 carries 8 bytes (ISO 11898-1).
	f.DLC = uint8(dlc)
	f.Data, err = parseData(f.Data, fs[6:], min(int(dlc), 8), a.base)
	return err == nil, err
}

// fd reads a CANFD line: channel, direction, id or ErrorFrame, an
// optional symbolic name, BRS, ESI, DLC, data length, data, then message
// duration, length and the flags whose bit 12 (EDL) marks an FD frame.
func (a *ascReader) fd(fs [][]byte) (bool, error) {
	f := &a.f
	if len(fs) < 3 {
		return false, errors.New("CANFD line too short")
	}
	ch, err := strconv.Atoi(string(fs[0]))
	if err != nil || ch < 0 {
		return false, fmt.Errorf("CANFD channel %.10q", fs[0])
	}
	f.Channel = ch
	if bytes.EqualFold(fs[2], []byte("ErrorFrame")) {
		f.setError()
		return true, nil
	}
	if !isDir(fs[1]) {
		return false, fmt.Errorf("CANFD direction %.10q", fs[1])
	}
	if err := a.id(fs[2]); err != nil {
		return false, err
	}
	rest := fs[3:]
	if len(rest) > 0 && !isBit(rest[0]) {
		rest = rest[1:] // the symbolic name
	}
	if len(rest) < 4 || !isBit(rest[0]) || !isBit(rest[1]) {
		return false, errors.New("CANFD line: no BRS, ESI, DLC and data length")
	}
	dlc, err := parseUint(rest[2], 16, 4)
	if err != nil {
		return false, fmt.Errorf("CANFD length code: %w", err)
	}
	n, err := parseUint(rest[3], 10, 7)
	if err != nil || n > 64 {
		return false, fmt.Errorf("CANFD data length %.10q", rest[3])
	}
	data := rest[4:]
	if len(data) < int(n)+3 {
		return false, errors.New("CANFD line: no flags after the data")
	}
	flags, err := parseUint(data[n+2], 16, 32)
	if err != nil {
		return false, fmt.Errorf("CANFD flags: %w", err)
	}
	// EDL or BRS (which only an FD frame has) or more than 8 bytes: FD.
	// ESI alone is not: CANoe sets it on classic frames of an FD channel.
	fd := flags&(1<<12) != 0 || rest[0][0] == '1' || n > 8 || dlc > 8
	if fd {
		f.setFD(rest[0][0] == '1', rest[1][0] == '1')
	}
	f.DLC = uint8(dlc)
	if !fd && n == 0 && dlc > 0 {
		f.ID |= rtrFlag
		return true, nil
	}
	f.Data, err = parseData(f.Data, data, int(n), a.base)
	return err == nil, err
}

// id reads an ASC identifier: hex or decimal as the base line says, an
// x suffix for a 29-bit one.
func (a *ascReader) id(b []byte) error {
	ext := len(b) > 1 && (b[len(b)-1] == 'x' || b[len(b)-1] == 'X')
	if ext {
		b = b[:len(b)-1]
	}
	id, err := parseID(b, a.base, ext)
	if err != nil {
		return err
	}
	a.f.setID(id, ext, false)
	return nil
}

// header reads a line that does not start with a time: date, base,
// Begin/End Triggerblock, internal events. An unknown one is other.
func (a *ascReader) header(fs [][]byte) error {
	switch {
	case bytes.EqualFold(fs[0], []byte("date")) && len(fs) > 2:
		if t, err := ascDate(fs[2:]); err == nil {
			a.start = t
		}
		return nil
	case bytes.EqualFold(fs[0], []byte("base")) && len(fs) > 1:
		switch string(bytes.ToLower(fs[1])) {
		case "hex":
			a.base = 16
		case "dec":
			a.base = 10
		default:
			return fmt.Errorf("base %.10q: want hex or dec", fs[1])
		}
		a.relative = len(fs) > 3 && bytes.EqualFold(fs[3], []byte("relative"))
		return nil
	case bytes.EqualFold(fs[0], []byte("begin")) && len(fs) > 3:
		// Begin Triggerblock Sat Dec 05 06:28:22.123 am 2026
		if t, err := ascDate(fs[3:]); err == nil {
			a.start = t
		}
		a.last = 0
		return nil
	case bytes.EqualFold(fs[0], []byte("end")),
		bytes.EqualFold(fs[0], []byte("internal")),
		bytes.EqualFold(fs[0], []byte("no")):
		return nil
	}
	return errOther
}

// ascDate reads "Dec 05 06:28:22.123 am 2026" (the weekday gone), its
// 12- or 24-hour clock, English or German month, as UTC.
func ascDate(fs [][]byte) (time.Time, error) {
	if len(fs) < 4 {
		return time.Time{}, errors.New("short date")
	}
	month := monthOf(string(fs[0]))
	day, err1 := strconv.Atoi(string(fs[1]))
	clock := fs[2]
	year, err2 := strconv.Atoi(string(fs[len(fs)-1]))
	if month == 0 || err1 != nil || err2 != nil || day < 1 || day > 31 {
		return time.Time{}, errors.New("not a date")
	}
	hms, frac, _ := bytes.Cut(clock, []byte("."))
	parts := bytes.Split(hms, []byte(":"))
	if len(parts) != 3 {
		return time.Time{}, errors.New("not a clock")
	}
	var v [3]int
	for i, p := range parts {
		n, err := strconv.Atoi(string(p))
		if err != nil || n < 0 || n > 59 {
			return time.Time{}, errors.New("not a clock")
		}
		v[i] = n
	}
	if len(fs) == 5 {
		switch string(bytes.ToLower(fs[3])) {
		case "am":
			if v[0] == 12 {
				v[0] = 0
			}
		case "pm":
			if v[0] < 12 {
				v[0] += 12
			}
		}
	}
	ns := 0
	if len(frac) > 0 {
		d, err := parseDecimal(append([]byte("0."), frac...), time.Second)
		if err != nil {
			return time.Time{}, err
		}
		ns = int(d)
	}
	return time.Date(year, time.Month(month), day, v[0], v[1], v[2], ns, time.UTC), nil
}

func monthOf(s string) int {
	for i, names := range [12][]string{{"Jan"}, {"Feb"}, {"Mar", "Mär"}, {"Apr"}, {"May", "Mai"}, {"Jun"}, {"Jul"}, {"Aug"}, {"Sep"}, {"Oct", "Okt"}, {"Nov"}, {"Dec", "Dez"}} {
		for _, n := range names {
			if s == n {
				return i + 1
			}
		}
	}
	return 0
}

func isDir(b []byte) bool { return string(b) == "Rx" || string(b) == "Tx" }

func isBit(b []byte) bool { return len(b) == 1 && (b[0] == '0' || b[0] == '1') }
