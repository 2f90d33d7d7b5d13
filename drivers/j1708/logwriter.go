package j1708

import (
	"bufio"
	"fieldtap/drivers/wire"
	"io"
	"time"
)

// LogWriter writes messages in the text log format wire.ParseJ1708Line reads.
type LogWriter struct {
	w    *bufio.Writer
	line []byte
}

// NewLogWriter buffers writes to w; call Flush at the end.
func NewLogWriter(w io.Writer) *LogWriter { return &LogWriter{w: bufio.NewWriter(w)} }

// Write appends one message.
func (l *LogWriter) Write(t time.Time, j2497 bool, msg []byte) error {
	l.line = wire.AppendJ1708Line(l.line[:0], t, j2497, msg)
	_, err := l.w.Write(l.line)
	return err
}

// Flush writes buffered lines.
func (l *LogWriter) Flush() error { return l.w.Flush() }
