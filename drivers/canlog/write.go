package canlog

import (
	"bufio"
	"io"
	"time"

	"fieldtap/drivers/capture"
)

const hexDigits = "0123456789ABCDEF"

// AppendLine appends one candump -l line (with its newline) for a frame
// with id (flag bits included) and data, seen at t on iface.
func AppendLine(dst []byte, t time.Time, iface string, id uint32, data []byte) []byte {
	dst = append(dst, '(')
	dst = appendTime(dst, t)
	dst = append(dst, ") "...)
	dst = append(dst, iface...)
	dst = append(dst, ' ')
	switch {
	case id&capture.CANERR != 0:
		dst = appendHex(dst, uint64(id&(capture.CANERR|0x1FFFFFFF)), 8)
	case id&capture.CANEFF != 0:
		dst = appendHex(dst, uint64(id&0x1FFFFFFF), 8)
	default:
		dst = appendHex(dst, uint64(id&0x7FF), 3)
	}
	dst = append(dst, '#')
	if id&capture.CANRTR != 0 {
		dst = append(dst, 'R')
	} else {
		for _, b := range data {
			dst = append(dst, hexDigits[b>>4], hexDigits[b&0xF])
		}
	}
	return append(dst, '\n')
}

func appendTime(dst []byte, t time.Time) []byte {
	s, us := t.Unix(), t.Nanosecond()/1000
	if s < 0 {
		s, us = 0, 0
	}
	var buf [20]byte
	i := len(buf)
	for {
		i--
		buf[i] = byte('0' + s%10)
		s /= 10
		if s == 0 {
			break
		}
	}
	dst = append(dst, buf[i:]...)
	dst = append(dst, '.')
	for d := 100000; d > 0; d /= 10 {
		dst = append(dst, byte('0'+us/d%10))
	}
	return dst
}

func appendHex(dst []byte, v uint64, digits int) []byte {
	for i := digits - 1; i >= 0; i-- {
		dst = append(dst, hexDigits[(v>>(4*i))&0xF])
	}
	return dst
}

// Writer writes LinkCANSocketCAN frames as candump -l lines.
type Writer struct {
	w     *bufio.Writer
	iface string
	buf   []byte
}

// NewWriter returns a Writer that labels every line with iface. Call Flush
// when done.
func NewWriter(w io.Writer, iface string) *Writer {
	return &Writer{w: bufio.NewWriter(w), iface: iface}
}

// WriteFrame writes one frame; a frame that is not a valid SocketCAN
// frame is an error and nothing is written.
func (w *Writer) WriteFrame(f capture.Frame) error {
	id, data, err := capture.DecodeCAN(f.Data)
	if err != nil {
		return err
	}
	w.buf = AppendLine(w.buf[:0], f.Time, w.iface, id, data)
	_, err = w.w.Write(w.buf)
	return err
}

// Flush writes any buffered lines.
func (w *Writer) Flush() error { return w.w.Flush() }
