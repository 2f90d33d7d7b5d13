package canfiles

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"time"

	"fieldtap/drivers/wire"
)

// unixMicros is where a SavvyCAN time stamp is read as Unix microseconds
// (from September 2001 on) rather than microseconds from the capture's
// start: SavvyCAN writes the one or the other by its "use system clock"
// setting, and a capture runs for less than 31 years.
const unixMicros = 1_000_000_000_000_000

// ReadSavvyCSV reads SavvyCAN's native (GVRET) CSV: a header line naming
// the columns ("Time Stamp,ID,Extended,Dir,Bus,LEN,D1,…", Dir absent in
// older versions), then a line a frame. The time stamp is microseconds,
// Unix time from 2001 on, else from the capture's start; the id is hex,
// Extended true or false, Bus from 0. A frame longer than 8 bytes is CAN
// FD: SavvyCAN marks FD frames by nothing else, so one of 8 bytes or
// fewer reads as classic and no FD frame has BRS or ESI.
func ReadSavvyCSV(r io.Reader, frame func(*Frame) error, bad Bad) error {
	c := csvReader{}
	return readLines(r, c.line, &c.f, frame, bad)
}

// The columns a SavvyCAN CSV must name.
var csvColumns = []string{"Time Stamp", "ID", "Extended", "Bus", "LEN", "D1"}

type csvReader struct {
	col    map[string]int // column index by header name; nil before the header
	fields [][]byte
	f      Frame
	data   [64]byte
}

func (c *csvReader) line(line []byte) (bool, error) {
	line = bytes.TrimRight(line, "\r")
	if len(bytes.TrimSpace(line)) == 0 {
		return false, nil
	}
	c.fields = c.fields[:0]
	for f := range bytes.SplitSeq(line, []byte(",")) {
		if len(c.fields) == maxFields {
			break
		}
		c.fields = append(c.fields, bytes.TrimSpace(f))
	}
	if c.col == nil {
		c.col = map[string]int{}
		for i, f := range c.fields {
			c.col[string(f)] = i
		}
		for _, name := range csvColumns {
			if _, ok := c.col[name]; !ok {
				c.col = nil
				return false, fmt.Errorf("header has no %q column: not a SavvyCAN CSV header", name)
			}
		}
		return false, nil
	}
	get := func(name string) []byte {
		if i := c.col[name]; i < len(c.fields) {
			return c.fields[i]
		}
		return nil
	}
	ts, err := parseUint(get("Time Stamp"), 10, 63)
	if err != nil {
		return false, fmt.Errorf("time stamp: %w", err)
	}
	if ts > uint64(maxOffset/time.Microsecond) {
		return false, fmt.Errorf("time stamp %d µs: more than a century", ts)
	}
	f := &c.f
	*f = Frame{Data: c.data[:0]}
	if ts >= unixMicros {
		f.Time = time.UnixMicro(int64(ts)).UTC()
		f.Offset = time.Duration(ts) * time.Microsecond
	} else {
		f.Offset = time.Duration(ts) * time.Microsecond
		f.Time = epoch.Add(f.Offset)
	}
	var ext bool
	switch string(bytes.ToLower(get("Extended"))) {
	case "true", "1":
		ext = true
	case "false", "0":
	default:
		return false, fmt.Errorf("column Extended %.10q: want true or false", get("Extended"))
	}
	n, err := parseUint(get("LEN"), 10, 8)
	if err != nil {
		return false, fmt.Errorf("LEN: %w", err)
	}
	if n > 64 {
		return false, fmt.Errorf("LEN %d: over 64 bytes", n)
	}
	id, err := parseID(get("ID"), 16, ext)
	if err != nil {
		return false, err
	}
	bus, err := strconv.Atoi(string(get("Bus")))
	if err != nil || bus < 0 {
		return false, fmt.Errorf("column Bus %.10q: want a bus number", get("Bus"))
	}
	f.setID(id, ext, false)
	f.Channel, f.DLC = bus, uint8(n)
	if n > 8 {
		f.setFD(false, false)
		f.DLC = uint8(wire.CANFDDLC(int(n)))
	}
	d1 := c.col["D1"]
	f.Data, err = parseData(f.Data, c.fields[min(d1, len(c.fields)):], int(n), 16)
	return err == nil, err
}
