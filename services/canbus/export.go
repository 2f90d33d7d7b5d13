package canbus

import (
	"context"
	"errors"
	"fmt"
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

// Selection picks the frames an export writes: an id under a mask (the
// frame's RTR bit ignored, as can_frames compares) and a time range.
type Selection struct {
	ID, Mask uint32 // with wire.CAN* flag bits, as can_frames parses them
	HasID    bool
	Since    time.Time // zero: from the oldest recorded frame
	Until    time.Time // zero: to the newest stored frame
	MaxLines int       // 0: DefaultExportLines; at most MaxExportLines
}

func (s Selection) match(t time.Time, id uint32) bool {
	if s.HasID && (id&^wire.CANRTR)&s.Mask != s.ID&s.Mask {
		return false
	}
	return (s.Since.IsZero() || !t.Before(s.Since)) && (s.Until.IsZero() || t.Before(s.Until))
}

// Candump is an export: candump -l text, oldest frame first; CAN FD
// frames as `##` lines.
type Candump struct {
	Port  string
	Lines int
	// FromRecorder of the lines are frames the store had evicted, read
	// from the recorder.
	FromRecorder int
	Truncated    bool // MaxLines reached: narrow since/until
	// RecorderCut is true when the recorder's read bound ended the older
	// part early (recorder.ScanStats.Cut): narrow since/until.
	RecorderCut bool
	Candump     string
}

// recordedEnd stands for "no end" in a recorder query: far past any
// capture, short of where Unix nanoseconds overflow.
var recordedEnd = time.Unix(1<<33, 0)

// ExportCandump writes the frames of port matching sel as candump -l
// lines: first what the recorder holds from before the store's oldest
// frame (rec may be nil), then the store. A port this run no longer has
// exports from the recorder alone.
func (s *Store) ExportCandump(ctx context.Context, rec Recorded, port string, sel Selection) (Candump, error) {
	if sel.MaxLines == 0 {
		sel.MaxLines = DefaultExportLines
	}
	if sel.MaxLines < 0 || sel.MaxLines > MaxExportLines {
		return Candump{}, fmt.Errorf("canbus: max lines %d: want 1 to %d", sel.MaxLines, MaxExportLines)
	}
	p := s.Lookup(port)
	if p == nil && rec == nil {
		return Candump{}, fmt.Errorf("canbus: no CAN port %q", port)
	}
	out := Candump{Port: port}
	var buf []byte
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
				buf = wire.AppendCandumpFrame(buf, f.Time, port, id, flags, data)
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
			buf = wire.AppendCandumpFrame(buf, r.Time, port, r.ID, r.Flags, r.Payload())
			out.Lines++
			return true
		})
	}
	out.Candump = string(buf)
	if out.Lines == 0 {
		return out, ErrNothingToExport
	}
	return out, nil
}
