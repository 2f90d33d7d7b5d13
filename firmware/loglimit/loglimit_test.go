package loglimit

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedBuffer is a log sink the window timers may write to.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) lines(substr string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Count(l.b.String(), substr)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func newLogger(t *testing.T, o Options) (*slog.Logger, *Handler, *lockedBuffer) {
	t.Helper()
	var buf lockedBuffer
	h, err := New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}), o)
	if err != nil {
		t.Fatal(err)
	}
	return slog.New(h), h, &buf
}

func TestFloodIsCountedNotWritten(t *testing.T) {
	log, h, buf := newLogger(t, Options{Burst: 3, Window: time.Hour})
	const bad = 200_000
	for n := range bad {
		log.Warn("skipping malformed candump line", "file", "a.log", "line", n+1)
	}
	log.Warn("skipping malformed candump line", "file", "b.log", "line", 1)
	log.Debug("tool call", "tool", "capture_status")
	for range 5 {
		log.Debug("tool call", "tool", "capture_status")
	}
	h.Flush()
	if got := buf.lines("msg=\"skipping malformed candump line\" file=a.log"); got != 3 {
		t.Errorf("%d lines of the flooded kind written, want the burst of 3", got)
	}
	if got := buf.lines("file=b.log"); got != 1 {
		t.Errorf("another file's line: %d written, want 1 (a kind of its own)", got)
	}
	if got := buf.lines("tool call"); got != 6 {
		t.Errorf("%d debug lines, want all 6 (debug is not limited)", got)
	}
	if !strings.Contains(buf.String(), "msg=\""+SuppressedMsg+"\" kind=\"skipping malformed candump line\" file=a.log suppressed=199997") {
		t.Errorf("no summary with the count:\n%s", buf.String())
	}
}

func TestSummaryWhenTheWindowEnds(t *testing.T) {
	log, _, buf := newLogger(t, Options{Burst: 1, Window: 20 * time.Millisecond})
	for range 5 {
		log.Error("audit record not written", "peer", "10.0.0.9")
	}
	deadline := time.Now().Add(30 * time.Second)
	for buf.lines(SuppressedMsg) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the window's count was never reported:\n%s", buf.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if !strings.Contains(buf.String(), "peer=10.0.0.9 suppressed=4") {
		t.Errorf("summary:\n%s", buf.String())
	}
	log.Error("audit record not written", "peer", "10.0.0.9")
	if got := buf.lines("msg=\"audit record not written\" peer"); got != 2 {
		t.Errorf("%d lines after the window ended, want the new window's first too", got)
	}
}

func TestSourceFromWithAttrs(t *testing.T) {
	log, h, buf := newLogger(t, Options{Burst: 1, Window: time.Hour})
	a, b := log.With("port", "can1"), log.With("port", "can2")
	for range 3 {
		a.Warn("port failed; restarting")
		b.Warn("port failed; restarting")
	}
	h.Flush()
	if got := buf.lines("msg=\"port failed; restarting\""); got != 2 {
		t.Errorf("%d lines, want one per port", got)
	}
	if got := buf.lines("suppressed=2"); got != 2 {
		t.Errorf("%d summaries of 2, want one per port:\n%s", got, buf.String())
	}
}

func TestKindsAreBounded(t *testing.T) {
	log, h, buf := newLogger(t, Options{Burst: 1, Window: time.Hour, MaxKinds: 4})
	for i := range 100 {
		log.Warn("connection refused: over the per-address cap", "peer", i)
	}
	h.Flush()
	// Four peers of their own, then every other shares one allowance.
	if got := buf.lines("msg=\"connection refused"); got != 5 {
		t.Errorf("%d lines, want 5", got)
	}
	if !strings.Contains(buf.String(), "kind=\"(other log lines)\" suppressed=95") {
		t.Errorf("no shared summary:\n%s", buf.String())
	}
	if n := len(h.st.kinds); n != 0 {
		t.Errorf("%d kinds after Flush", n)
	}
}

func TestOptionsChecked(t *testing.T) {
	if _, err := New(slog.DiscardHandler, Options{Burst: -1}); err == nil {
		t.Error("a negative burst was accepted")
	}
}
