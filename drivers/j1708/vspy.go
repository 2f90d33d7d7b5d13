package j1708

import (
	"encoding/csv"
	"encoding/hex"
	"errors"
	"fieldtap/drivers/wire"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
)

// maxVSpyField bounds one CSV field; B8 carries the overflow bytes of a
// message, at most wire.MaxJ1708Message two-digit hex bytes with spaces.
const maxVSpyField = 3 * wire.MaxJ1708Message

// VSpyStats counts an import.
type VSpyStats struct {
	Rows     int // J1708 rows read
	Messages int // messages reassembled (Rows - 1: see ReadVSpy)
	Skipped  int // rows of other networks or malformed rows
}

// ReadVSpy imports an Intrepid Vehicle Spy 3 CSV export of J1708 traffic.
// Vehicle Spy lays J1708 rows out in its J1850 columns PT, Trgt, Src,
// B1..B8 (B8 holding extra space-separated bytes), and in the exports we
// have, each row's PT and Trgt hold the last two bytes (final data byte
// and checksum) of the previous row's message. So message i is Src[i],
// B1..Bn[i], PT[i+1], Trgt[i+1]: the first row's PT/Trgt belong to a
// message before the capture and the last row's tail is unknown, so n
// rows give n-1 messages. Times are the row's Abs Time on the Unix epoch.
// fn receives each message; an error from fn stops the import.
func ReadVSpy(r io.Reader, fn func(wire.J1708Line) error) (VSpyStats, error) {
	var st VSpyStats
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	var col map[string]int
	var need int // the highest column col names
	var pending *wire.J1708Line
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return st, fmt.Errorf("vspy: %w", err)
		}
		if len(rec) > 0 && rec[0] == "Line" {
			if h, last := vspyHeader(rec); h != nil {
				col, need = h, last
			}
			continue
		}
		if col == nil || len(rec) <= need || rec[col["Network"]] != "J1708" {
			st.Skipped++
			continue
		}
		head, body, t, err := vspyRow(rec, col)
		if err != nil {
			st.Skipped++
			continue
		}
		st.Rows++
		if pending != nil {
			pending.Data = append(pending.Data, head...)
			st.Messages++
			if err := fn(*pending); err != nil {
				return st, err
			}
		}
		pending = &wire.J1708Line{Time: t, Data: body}
	}
	if col == nil {
		return st, errors.New("vspy: no J1708 header (PT,Trgt,Src,B1..B8) found")
	}
	return st, nil
}

// vspyHeader maps the J1708 header's column names, or returns nil for the
// other networks' headers. last is the highest column a row must have:
// the header may name its columns in any order.
func vspyHeader(rec []string) (col map[string]int, last int) {
	col = map[string]int{}
	for i, name := range rec {
		col[name] = i
	}
	for _, need := range []string{"Abs Time(Sec)", "Network", "PT", "Trgt", "Src", "B1", "B8"} {
		i, ok := col[need]
		if !ok {
			return nil, 0
		}
		last = max(last, i)
	}
	return col, last
}

// vspyRow returns the row's two leading tail bytes, its own message bytes
// (Src, B1..B8) and its time.
func vspyRow(rec []string, col map[string]int) (head, body []byte, t time.Time, err error) {
	secs, err := strconv.ParseFloat(rec[col["Abs Time(Sec)"]], 64)
	if err != nil || secs < 0 || secs > 1e12 {
		return nil, nil, t, fmt.Errorf("time %q", rec[col["Abs Time(Sec)"]])
	}
	var hexs []string
	for i := col["PT"]; i <= col["B8"]; i++ {
		if len(rec[i]) > maxVSpyField {
			return nil, nil, t, errors.New("field too long")
		}
		hexs = append(hexs, strings.Fields(rec[i])...)
	}
	b := make([]byte, 0, len(hexs))
	for _, h := range hexs {
		v, err := hex.DecodeString(h)
		if err != nil || len(v) != 1 {
			return nil, nil, t, fmt.Errorf("byte %q", h)
		}
		b = append(b, v[0])
	}
	// A row holds the previous message's last two bytes and up to all but
	// the last two of its own (a row may hold only the previous tail).
	if len(b) < 2 || len(b) > wire.MaxJ1708Message {
		return nil, nil, t, errors.New("row length")
	}
	us := math.Round(secs * 1e6)
	t = time.Unix(0, int64(us)*int64(time.Microsecond)).UTC()
	return b[:2:2], b[2:], t, nil
}
