package canbus

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"fieldtap/drivers/wire"
	"fieldtap/services/recorder"
)

// Export bounds: one answer carries the candump text, ~45 bytes a line
// (a 64-byte CAN FD line is ~170).
const (
	DefaultExportLines = 10_000
	MaxExportLines     = 10_000
)

// ErrNothingToExport is returned when no stored or recorded frame of the
// port matches: the answer carries no text.
var ErrNothingToExport = errors.New("canbus: nothing to export: no frame matches in the store or the recorder")

// Recorded is the recorder's read side a CAN export needs.
type Recorded interface {
	Scan(ctx context.Context, q recorder.Query, fn func(*recorder.Frame) error) (recorder.ScanStats, error)
}

// Format is the file format of an export.
type Format string

// The formats an export writes.
const (
	FormatCandump Format = "candump" // candump -l text (the default)
	FormatASC     Format = "asc"     // Vector ASC text
	FormatBLF     Format = "blf"     // Vector BLF, zlib-compressed log containers
)

// Formats lists every Format, the default first.
var Formats = []Format{FormatCandump, FormatASC, FormatBLF}

// Selection picks the frames an export writes: an id under a mask (the
// frame's RTR bit ignored, as can_frames compares) and a time range.
type Selection struct {
	ID, Mask uint32 // with wire.CAN* flag bits, as can_frames parses them
	HasID    bool
	Since    time.Time // zero: from the oldest recorded frame
	Until    time.Time // zero: to the newest stored frame
	MaxLines int       // 0: DefaultExportLines; at most MaxExportLines
	Format   Format    // "": FormatCandump
}

func (s Selection) match(t time.Time, id uint32) bool {
	if s.HasID && (id&^wire.CANRTR)&s.Mask != s.ID&s.Mask {
		return false
	}
	return (s.Since.IsZero() || !t.Before(s.Since)) && (s.Until.IsZero() || t.Before(s.Until))
}

// Candump is an export, oldest frame first: candump -l text (CAN FD
// frames as `##` lines), or ASC text, or BLF bytes, as the selection's
// Format asked (CAN FD frames as ASC CANFD lines, BLF CAN_FD_MESSAGE_64
// objects). Lines counts frames written.
type Candump struct {
	Port   string
	Format Format
	Lines  int
	// FromRecorder of the lines are frames the store had evicted, read
	// from the recorder.
	FromRecorder int
	Truncated    bool // MaxLines reached: narrow since/until
	// RecorderCut is true when the recorder's read bound ended the older
	// part early (recorder.ScanStats.Cut): narrow since/until.
	RecorderCut bool
	Candump     string // FormatCandump
	ASC         string // FormatASC
	BLF         []byte // FormatBLF
}

// logWriter lays an export's frames out in its format.
type logWriter struct {
	format Format
	buf    []byte
	start  time.Time // ASC and BLF: their header's start, from the first frame
	blf    *wire.BLFWriter
}

// add writes one frame, classic or CAN FD.
func (w *logWriter) add(t time.Time, port string, id uint32, flags byte, data []byte) {
	switch w.format {
	case FormatASC:
		if w.start.IsZero() {
			w.start = wire.ASCStart(t)
			w.buf = wire.AppendASCHeader(w.buf, w.start)
		}
		w.buf = wire.AppendASC(w.buf, w.start, t, id, flags, data)
	case FormatBLF:
		if w.blf == nil {
			w.blf = wire.NewBLFWriter(wire.ASCStart(t))
		}
		w.blf.Add(t, id, flags, data)
	default:
		w.buf = wire.AppendCandumpFrame(w.buf, t, port, id, flags, data)
	}
}

// finish puts the written frames in out.
func (w *logWriter) finish(out *Candump) {
	switch w.format {
	case FormatASC:
		if out.Lines > 0 {
			out.ASC = string(wire.AppendASCEnd(w.buf))
		}
	case FormatBLF:
		if w.blf != nil {
			out.BLF = w.blf.Bytes()
		}
	default:
		out.Candump = string(w.buf)
	}
}

// recordedEnd stands for "no end" in a recorder query: far past any
// capture, short of where Unix nanoseconds overflow.
var recordedEnd = time.Unix(1<<33, 0)

// ExportCandump writes the frames of port matching sel in sel's Format:
// first what the recorder holds from before the store's oldest
// frame (rec may be nil), then the store. A port this run no longer has
// exports from the recorder alone.
func (s *Store) ExportCandump(ctx context.Context, rec Recorded, port string, sel Selection) (Candump, error) {
	if sel.MaxLines == 0 {
		sel.MaxLines = DefaultExportLines
	}
	if sel.MaxLines < 0 || sel.MaxLines > MaxExportLines {
		return Candump{}, fmt.Errorf("canbus: max lines %d: want 1 to %d", sel.MaxLines, MaxExportLines)
	}
	if sel.Format == "" {
		sel.Format = FormatCandump
	}
	if !slices.Contains(Formats, sel.Format) {
		return Candump{}, fmt.Errorf("canbus: export format %q: want one of %v", sel.Format, Formats)
	}
	p := s.Lookup(port)
	if p == nil && rec == nil {
		return Candump{}, fmt.Errorf("canbus: no CAN port %q", port)
	}
	out := Candump{Port: port, Format: sel.Format}
	w := logWriter{format: sel.Format}
	var storeFrom time.Time // the store's oldest frame: older ones come from the recorder
	if p != nil {
		snap := p.Frames()
		if r, ok := snap.Get(snap.FirstSeq()); ok {
			storeFrom = r.Time
		}
	}
	if rec != nil && (storeFrom.IsZero() || sel.Since.IsZero() || sel.Since.Before(storeFrom)) {
		q := recorder.Query{From: sel.Since, To: recordedEnd, Ports: []string{port}}
		if q.From.IsZero() {
			q.From = time.Unix(0, 1)
		}
		if !storeFrom.IsZero() {
			q.To = storeFrom
		}
		if !sel.Until.IsZero() && sel.Until.Before(q.To) {
			q.To = sel.Until
		}
		if q.To.After(q.From) {
			st, err := rec.Scan(ctx, q, func(f *recorder.Frame) error {
				if f.Link != wire.LinkCANSocketCAN {
					return nil
				}
				id, flags, data, err := wire.DecodeCANFD(f.Data)
				if err != nil || !sel.match(f.Time, id) {
					return nil
				}
				if out.Lines == sel.MaxLines {
					out.Truncated = true
					return recorder.ErrStop
				}
				w.add(f.Time, port, id, flags, data)
				out.Lines++
				out.FromRecorder++
				return nil
			})
			if err != nil {
				return out, err
			}
			out.RecorderCut = st.Cut
		}
	}
	if p != nil && !out.Truncated {
		p.Frames().Range(0, func(_ uint64, r Record) bool {
			if !sel.match(r.Time, r.ID) {
				return true
			}
			if out.Lines == sel.MaxLines {
				out.Truncated = true
				return false
			}
			w.add(r.Time, port, r.ID, r.Flags, r.Payload())
			out.Lines++
			return true
		})
	}
	w.finish(&out)
	if out.Lines == 0 {
		return out, ErrNothingToExport
	}
	return out, nil
}
