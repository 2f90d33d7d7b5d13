package recorder

import (
	"fmt"
	"path/filepath"
	"slices"
	"time"
)

// Marks are kept beside the segments in marks.json, not inside them: the
// segments stay plain pcapng that tshark, Wireshark's File Set and
// mergecap read as they are, and a mark (a moment a person pressed the
// confirm button or called the mark tool) belongs to every port at once,
// where a pcapng comment belongs to one packet of one interface. The
// journal survives restarts and rotation; a mark older than the oldest
// segment still says when it was pressed.
const (
	// maxMarks bounds the journal; the oldest go first and are counted.
	maxMarks = 1024
	// maxMarksBytes bounds marks.json read at boot: maxMarks marks of a
	// 128-byte label each with room to spare.
	maxMarksBytes = 1 << 20
)

// Mark is one marked moment as the recorder journals it.
type Mark struct {
	At     time.Time `json:"at"`
	Label  string    `json:"label"`
	Source string    `json:"source"` // button or mcp
}

type markJournal struct {
	Marks   []Mark `json:"marks"`
	Dropped uint64 `json:"dropped"` // pushed out by maxMarks
}

// Mark journals a mark in marks.json.
func (r *Recorder) Mark(m Mark) error {
	r.wmu.Lock()
	defer r.wmu.Unlock()
	old := r.marks
	m.At = m.At.UTC()
	r.marks.Marks = append(slices.Clone(r.marks.Marks), m)
	if len(r.marks.Marks) > maxMarks {
		r.marks.Marks = r.marks.Marks[1:]
		r.marks.Dropped++
	}
	if err := writeJSON(filepath.Join(r.opt.Dir, marksFile), r.marks); err != nil {
		r.marks = old
		return fmt.Errorf("recorder: save marks: %w", err)
	}
	return nil
}

// Marks returns the journaled marks oldest first, and how many the bound
// pushed out.
func (r *Recorder) Marks() ([]Mark, uint64) {
	r.wmu.Lock()
	defer r.wmu.Unlock()
	return slices.Clone(r.marks.Marks), r.marks.Dropped
}
