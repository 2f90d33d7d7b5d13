package j1708

import (
	"bufio"
	"io"
	"strconv"
	"time"

	"github.com/gopacket/gopacket/layers"
)

// LinkJ2497 marks a J2497 (PLC4TRUCKS) message: the same layout as J1708,
// carried on the trailer power line. LINKTYPE_USER1, beside LinkJ1708's USER0.
const LinkJ2497 layers.LinkType = 148

const hexDigits = "0123456789ABCDEF"

// AppendLogLine appends `(1.688000) j1708 80020028…F4\n`: seconds since the
// Unix epoch with microseconds, the tag, the message in upper-case hex.
func AppendLogLine(dst []byte, t time.Time, j2497 bool, msg []byte) []byte {
	us := max(t.Round(time.Microsecond).UnixMicro(), 0)
	dst = append(dst, '(')
	dst = strconv.AppendInt(dst, us/1e6, 10)
	dst = append(dst, '.')
	frac := us % 1e6
	for d := int64(1e5); d > 0; d /= 10 {
		dst = append(dst, byte('0'+frac/d%10))
	}
	if j2497 {
		dst = append(dst, ") j2497 "...)
	} else {
		dst = append(dst, ") j1708 "...)
	}
	for _, b := range msg {
		dst = append(dst, hexDigits[b>>4], hexDigits[b&0x0F])
	}
	return append(dst, '\n')
}

// LogWriter writes messages in the text log format ParseLogLine reads.
type LogWriter struct {
	w    *bufio.Writer
	line []byte
}

// NewLogWriter buffers writes to w; call Flush at the end.
func NewLogWriter(w io.Writer) *LogWriter { return &LogWriter{w: bufio.NewWriter(w)} }

// Write appends one message.
func (l *LogWriter) Write(t time.Time, j2497 bool, msg []byte) error {
	l.line = AppendLogLine(l.line[:0], t, j2497, msg)
	_, err := l.w.Write(l.line)
	return err
}

// Flush writes buffered lines.
func (l *LogWriter) Flush() error { return l.w.Flush() }
