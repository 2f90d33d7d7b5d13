// Package marks keeps the moments a person marked: a press of the board's
// confirm button while no plan waits for it, or the MCP mark tool. A mark
// changes no bus; it is a point on every port's timeline (what_happened)
// and the reference can_re_analyse ranks bits against.
package marks

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Where a mark came from.
const (
	SourceButton = "button"
	SourceMCP    = "mcp"
)

// Bounds of the store: a technician marks by hand, so a thousand marks
// is hours of work; the oldest go first and are counted.
const (
	MaxMarks = 1024
	// MaxLabel bounds a label in bytes: a few words, not a document.
	MaxLabel = 128
)

// Mark is one marked moment.
type Mark struct {
	Seq    uint64    `json:"seq"` // 1-based, never reused in a store's life
	At     time.Time `json:"at"`
	Label  string    `json:"label"`
	Source string    `json:"source"`
}

// Sink is told of every mark after it is kept (the recorder's journal).
type Sink func(Mark) error

// Store is the bounded list of marks, oldest first.
type Store struct {
	mu      sync.Mutex
	marks   []Mark
	seq     uint64
	dropped uint64
	sink    Sink
	sinkErr uint64
}

// New returns a store holding earlier (marks kept before a restart, oldest
// first, numbered again from 1), handing every new mark to sink when not
// nil.
func New(sink Sink, earlier []Mark) *Store {
	s := &Store{sink: sink}
	for _, m := range earlier[max(0, len(earlier)-MaxMarks):] {
		s.seq++
		m.Seq = s.seq
		s.marks = append(s.marks, m)
	}
	return s
}

// CheckLabel refuses a label that is too long or not text.
func CheckLabel(label string) error {
	switch {
	case len(label) > MaxLabel:
		return fmt.Errorf("label is %d bytes, over the %d-byte bound", len(label), MaxLabel)
	case !utf8.ValidString(label):
		return errors.New("label is not UTF-8 text")
	case strings.ContainsAny(label, "\r\n\x00"):
		return errors.New("label holds a line break or NUL: one line of text")
	}
	return nil
}

// Add keeps a mark at t and hands it to the sink. A sink's failure is
// counted (SinkFailures), not returned: the mark is kept either way.
func (s *Store) Add(t time.Time, label, source string) (Mark, error) {
	if err := CheckLabel(label); err != nil {
		return Mark{}, err
	}
	s.mu.Lock()
	s.seq++
	m := Mark{Seq: s.seq, At: t.UTC(), Label: label, Source: source}
	if len(s.marks) == MaxMarks {
		s.marks = s.marks[1:]
		s.dropped++
	}
	s.marks = append(s.marks, m)
	sink := s.sink
	s.mu.Unlock()
	if sink != nil && sink(m) != nil {
		s.mu.Lock()
		s.sinkErr++
		s.mu.Unlock()
	}
	return m, nil
}

// Snapshot is a copy of the marks oldest first, with how many were pushed
// out by MaxMarks.
func (s *Store) Snapshot() (ms []Mark, dropped uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Mark(nil), s.marks...), s.dropped
}

// SinkFailures counts marks the sink refused.
func (s *Store) SinkFailures() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sinkErr
}

// Times lists the marks' times in [since, until) (a zero bound is open),
// oldest first.
func (s *Store) Times(since, until time.Time) []time.Time {
	ms, _ := s.Snapshot()
	var out []time.Time
	for _, m := range ms {
		if (since.IsZero() || !m.At.Before(since)) && (until.IsZero() || m.At.Before(until)) {
			out = append(out, m.At)
		}
	}
	return out
}
