package canlog

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fieldtap/drivers/wire"
	"fieldtap/tools/refdata"
)

// fuzzSeedBytes bounds a seed taken from a reference log: its head holds
// every line shape of the file, and a short seed keeps each run fast.
const fuzzSeedBytes = 4 << 10

// FuzzReadFile reads anything as a whole candump file: no input panics or
// ends the file early, every non-blank line is a frame (a CAN frame that
// EncodeCAN takes) or a counted bad line, and line numbers only grow.
func FuzzReadFile(f *testing.F) {
	for _, glob := range []string{"*.candump", "*.log"} {
		paths, _ := filepath.Glob(filepath.Join(refdata.Path(f, "can"), glob))
		for _, p := range paths {
			if fh, err := os.Open(p); err == nil {
				b, _ := io.ReadAll(io.LimitReader(fh, fuzzSeedBytes))
				fh.Close()
				f.Add(b)
			}
		}
	}
	f.Add([]byte("(1608041700.316550) can0 18FECA00#0102\n (000.005001)  can0  18FEDF00   [8]  8A A0 28 7D 7D FF FF F5\r\n\nnot candump\n(0.1)  can0  123   [2]  remote request"))
	f.Add(append(bytes.Repeat([]byte("#"), maxLine+1), "\n(0.0) can0 123#\n"...))
	f.Add([]byte("(1.000000) can0 123##1001122334455667788990011\n(1.000100) can0 18FECA00##3" + strings.Repeat("A5", 64) +
		"\n(1.0002) can0 7FF##0 R\n (000.000300)  can0  123  [12]  00 11 22 33 44 55 66 77 88 99 AA BB\n(1.0) can0 123##R\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		want := 0
		for _, line := range bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n")) {
			if len(line) > maxLine || len(bytes.TrimSpace(line)) > 0 {
				want++
			}
		}
		got, last := 0, 0
		step := func(n int) {
			if n <= last {
				t.Fatalf("line %d after line %d", n, last)
			}
			last = n
			got++
		}
		err := ReadFile(bytes.NewReader(b), func(n int, r *wire.CandumpRecord) error {
			step(n)
			if _, err := wire.AppendCANFrame(nil, r.ID, r.Flags, r.Payload()); err != nil {
				t.Fatalf("line %d: a frame no can_frame holds: %v", n, err)
			}
			return nil
		}, func(n int, reason string, _ error) {
			step(n)
			if reason != ReasonMalformed && reason != ReasonOverlong {
				t.Fatalf("line %d: reason %q", n, reason)
			}
		})
		if err != nil {
			t.Fatalf("ReadFile: %v", err)
		}
		if got != want {
			t.Fatalf("%d lines accounted for, %d non-blank lines in the input", got, want)
		}
	})
}
