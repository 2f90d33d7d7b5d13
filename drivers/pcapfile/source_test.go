package pcapfile

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"fieldtap/drivers/capture"
	"fieldtap/drivers/capture/capturetest"
)

// TestSourceBatchesBorrowChunksSafely reads a file several chunks long
// through a small hand-off whose consumer holds each batch a while: every
// frame must arrive whole and in order although frames borrow the chunks
// the reader recycles.
func TestSourceBatchesBorrowChunksSafely(t *testing.T) {
	for _, tc := range []struct {
		name string
		file func(testing.TB, int) []byte
	}{
		{name: "pcap", file: pcapBytes},
		{name: "pcapng", file: pcapngBytes},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const n = 3000 // 60..3059-byte records: about 4.7 MB, many chunks
			raw := tc.file(t, n)
			path := filepath.Join(t.TempDir(), "f")
			if err := os.WriteFile(path, raw, 0o644); err != nil {
				t.Fatal(err)
			}
			var c capture.Counters
			h := capture.NewHandoff(100, &c)
			src := New("file1", path)
			done := make(chan error, 1)
			go func() { done <- src.Run(context.Background(), h); h.Close() }()
			i := 0
			for {
				b, ok := h.Receive()
				if !ok {
					break
				}
				for _, f := range b.Frames {
					if want := bytes.Repeat([]byte{byte(i)}, 60+i); !bytes.Equal(f.Data, want) || !f.Time.Equal(t0.Add(time.Duration(i)*time.Millisecond)) {
						t.Fatalf("frame %d: %d bytes at %v, want %d bytes of %#x at %v", i, len(f.Data), f.Time, len(want), byte(i), t0.Add(time.Duration(i)*time.Millisecond))
					}
					i++
				}
				h.Release(b)
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if st := src.Stats(); i != n || !st.Exhausted || st.StoppedEarly != "" || c.Snapshot().Frames != n {
				t.Errorf("got %d frames (handed off %d), stats %+v; want %d and a clean end", i, c.Snapshot().Frames, st, n)
			}
		})
	}
}

// BenchmarkSource reads a pcapng file through the hand-off into a
// consumer that only releases: the driver's whole cost per packet.
func BenchmarkSource(b *testing.B) {
	// RTP-sized frames, the bulk of a SPAN capture.
	var buf bytes.Buffer
	w, err := pcapgo.NewNgWriter(&buf, layers.LinkTypeEthernet)
	if err != nil {
		b.Fatal(err)
	}
	data := make([]byte, 214)
	for i := range 100_000 {
		w.WritePacket(gopacket.CaptureInfo{Timestamp: t0.Add(time.Duration(i) * time.Millisecond), CaptureLength: len(data), Length: len(data)}, data)
	}
	w.Flush()
	path := filepath.Join(b.TempDir(), "f")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	frames := 0
	for b.Loop() {
		var c capture.Counters
		h := capture.NewHandoff(capture.DefaultHandoffDepth, &c)
		go func() { New("f", path).Run(context.Background(), h); h.Close() }()
		frames += capturetest.Drain(h)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(frames), "ns/frame")
}
