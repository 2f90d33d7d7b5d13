package j1708

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"fieldtap/drivers/wire"
	"fieldtap/tools/refdata"
)

// fuzzSeedBytes bounds a seed taken from a reference file: its head
// holds every line shape, and a short seed keeps each run fast.
const fuzzSeedBytes = 4 << 10

// addHeads seeds f with the head of every reference file matching glob
// under the J1708 data (none without ../shared/testdata).
func addHeads(f *testing.F, glob string) {
	paths, _ := filepath.Glob(filepath.Join(refdata.Path(f, "j1708"), glob))
	for _, p := range paths {
		if fh, err := os.Open(p); err == nil {
			b, _ := io.ReadAll(io.LimitReader(fh, fuzzSeedBytes))
			fh.Close()
			f.Add(b)
		}
	}
}

// FuzzReadLog reads anything as a J1708 log file: no input panics or
// ends the file early, every non-blank line is either a message (2..21
// bytes, surviving a write and a re-read) or a counted bad line, and
// line numbers only grow.
func FuzzReadLog(f *testing.F) {
	addHeads(f, "*.j1708")
	addHeads(f, "*.j2497")
	f.Add([]byte("(1.688000) j1708 80020028F4\n\n  \ngarbage\n(0.5) j2497 89F00087"))
	f.Add(append(bytes.Repeat([]byte("A"), maxLogLine+1), "\n(1.0) j1708 8080\n"...))
	f.Fuzz(func(t *testing.T, b []byte) {
		want := 0
		for _, line := range bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n")) {
			if len(line) > maxLogLine || len(bytes.TrimSpace(line)) > 0 {
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
		err := ReadLog(bytes.NewReader(b), func(n int, l wire.J1708Line) error {
			step(n)
			if len(l.Data) < wire.MinJ1708Message || len(l.Data) > wire.MaxJ1708Message {
				t.Fatalf("line %d: a %d-byte message", n, len(l.Data))
			}
			back, err := wire.ParseJ1708Line(wire.AppendJ1708Line(nil, l.Time, l.J2497, l.Data))
			if err != nil || !bytes.Equal(back.Data, l.Data) || !back.Time.Equal(l.Time) || back.J2497 != l.J2497 {
				t.Fatalf("line %d does not survive a write and a re-read: %+v, %v", n, back, err)
			}
			return nil
		}, func(n int, reason string, _ error) {
			step(n)
			if reason != ReasonMalformed && reason != ReasonOverlong {
				t.Fatalf("line %d: reason %q", n, reason)
			}
		})
		if err != nil {
			t.Fatalf("ReadLog: %v", err)
		}
		if got != want {
			t.Fatalf("%d lines accounted for, %d non-blank lines in the input", got, want)
		}
	})
}

// FuzzReadVSpy imports anything as a Vehicle Spy CSV: no input panics,
// and every message it reassembles is a J1708 message a log line can
// carry.
func FuzzReadVSpy(f *testing.F) {
	addHeads(f, "*.csv")
	f.Add([]byte("Line,Abs Time(Sec),Rel Time (Sec),Status,Er,Tx,Description,Network,Node,Trgt,Src,PT,B1,B2,B3,B4,B5,B6,B7,B8\n" +
		"1,0.1,0,,,,,J1708,,00,80,00,54,00,56,00,5B,07,5C,05 BB\n2,0.2,0,,,,,J1708,,99,80,0A,54,00,,,,,,\n"))
	// Columns named in another order: this once indexed past a short row.
	f.Add([]byte("Line,PT,Trgt,Src,B1,B8,Network,Abs Time(Sec)\n1,00,00,80,54,00\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		st, _ := ReadVSpy(bytes.NewReader(b), func(l wire.J1708Line) error {
			if len(l.Data) < wire.MinJ1708Message || len(l.Data) > wire.MaxJ1708Message {
				t.Fatalf("a %d-byte message", len(l.Data))
			}
			if _, err := wire.ParseJ1708Line(wire.AppendJ1708Line(nil, l.Time, l.J2497, l.Data)); err != nil {
				t.Fatalf("a message no log line carries: %v", err)
			}
			return nil
		})
		if st.Messages > st.Rows {
			t.Fatalf("%d messages from %d rows", st.Messages, st.Rows)
		}
	})
}
