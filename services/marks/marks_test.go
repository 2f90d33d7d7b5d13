package marks

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestStoreBoundsCountsAndHandsOn(t *testing.T) {
	var sunk []Mark
	fail := false
	s := New(func(m Mark) error {
		sunk = append(sunk, m)
		if fail {
			return errors.New("disk full")
		}
		return nil
	}, nil)
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for i := range MaxMarks + 2 {
		fail = i == 0
		if _, err := s.Add(t0.Add(time.Duration(i)*time.Second), "m", SourceButton); err != nil {
			t.Fatal(err)
		}
	}
	ms, dropped := s.Snapshot()
	if len(ms) != MaxMarks || dropped != 2 || ms[0].Seq != 3 || len(sunk) != MaxMarks+2 || s.SinkFailures() != 1 {
		t.Errorf("%d kept (first seq %d), %d dropped, %d sunk, %d sink failures", len(ms), ms[0].Seq, dropped, len(sunk), s.SinkFailures())
	}
	if got := s.Times(t0.Add(10*time.Second), t0.Add(13*time.Second)); len(got) != 3 || !got[0].Equal(t0.Add(10*time.Second)) {
		t.Errorf("Times = %v", got)
	}
}

func TestLabelRefusals(t *testing.T) {
	s := New(nil, []Mark{{Label: "before a restart", Source: SourceButton}})
	for _, bad := range []string{strings.Repeat("x", MaxLabel+1), "a\nb", "\xff"} {
		if _, err := s.Add(time.Now(), bad, SourceMCP); err == nil {
			t.Errorf("label %q accepted", bad)
		}
	}
	if ms, _ := s.Snapshot(); len(ms) != 1 || ms[0].Seq != 1 {
		t.Errorf("refused labels kept: %v", ms)
	}
}
