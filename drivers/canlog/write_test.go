package canlog

import (
	"bytes"
	"testing"
	"time"

	"fieldtap/drivers/capture"
	"fieldtap/drivers/wire"
)

func TestWriterWritesFrames(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf, "can0")
	fr, _ := wire.EncodeCAN(0x0CF00400|wire.CANEFF, []byte{0xF8, 0x7D})
	if err := w.WriteFrame(capture.Frame{Time: time.Unix(10, 5000), Data: fr}); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteFrame(capture.Frame{Data: []byte{1}}); err == nil {
		t.Error("a truncated frame must be refused")
	}
	w.Flush()
	if got, want := buf.String(), "(10.000005) can0 0CF00400#F87D\n"; got != want {
		t.Errorf("wrote %q, want %q", got, want)
	}
}
