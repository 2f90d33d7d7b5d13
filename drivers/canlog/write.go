package canlog

import (
	"bufio"
	"io"

	"fieldtap/drivers/capture"
	"fieldtap/drivers/wire"
)

// Writer writes LINKTYPE_CAN_SOCKETCAN frames as candump -l lines, CAN
// FD frames as `##` lines.
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
	id, flags, data, err := wire.DecodeCANFD(f.Data)
	if err != nil {
		return err
	}
	w.buf = wire.AppendCandumpFrame(w.buf[:0], f.Time, w.iface, id, flags, data)
	_, err = w.w.Write(w.buf)
	return err
}

// Flush writes any buffered lines.
func (w *Writer) Flush() error { return w.w.Flush() }
