package j1708

import (
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// line is one open of the serial port. The capture loop is its only
// reader and tells it every chunk it reads; WriteFrame is its only
// writer. That is how the write side sees the bus without a second
// reader racing the capture loop for bytes.
type line struct {
	w io.Writer
	// lastRx is when the newest received chunk arrived (unix ns); the
	// open time until a byte arrives, since the bus before open is unseen.
	lastRx atomic.Int64
	echo   atomic.Pointer[echo] // the send in flight, nil when none
}

func newLine(w io.Writer, opened time.Time) *line {
	l := &line{w: w}
	l.lastRx.Store(opened.UnixNano())
	return l
}

// received runs on the capture loop for every chunk read; b is borrowed.
func (l *line) received(b []byte, at time.Time) {
	l.lastRx.Store(at.UnixNano())
	if e := l.echo.Load(); e != nil {
		e.add(b)
	}
}

func (l *line) last() time.Time { return time.Unix(0, l.lastRx.Load()) }

// echo collects the bytes read back while one message is sent.
type echo struct {
	mu   sync.Mutex
	want int
	got  []byte
	full chan struct{} // closed when want bytes arrived
}

func newEcho(want int) *echo {
	return &echo{want: want, got: make([]byte, 0, want), full: make(chan struct{})}
}

func (e *echo) add(b []byte) {
	e.mu.Lock()
	defer e.mu.Unlock()
	room := e.want - len(e.got)
	if room <= 0 {
		return
	}
	e.got = append(e.got, b[:min(len(b), room)]...)
	if len(e.got) == e.want {
		close(e.full)
	}
}

func (e *echo) bytes() []byte {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]byte(nil), e.got...)
}
