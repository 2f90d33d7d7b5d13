package canfiles

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"fieldtap/drivers/wire"
)

// trcStartRes is half the step of a $STARTTIME written with ten decimals
// of a day (8.64 µs).
const trcStartRes = 4320 * time.Nanosecond

// writeSavvyCSV writes recs as SavvyCAN's native CSV, Unix microseconds,
// bus 0 for can0 and 1 for can1, as SavvyCAN saves a GVRET capture.
func writeSavvyCSV(t testing.TB, path string, recs []wire.CandumpRecord) {
	var b bytes.Buffer
	b.WriteString("Time Stamp,ID,Extended,Dir,Bus,LEN,D1,D2,D3,D4,D5,D6,D7,D8\n")
	for _, r := range recs {
		if r.ID&(wire.CANRTR|wire.CANERR) != 0 {
			continue
		}
		bus := 0
		if string(r.Interface) == "can1" {
			bus = 1
		}
		fmt.Fprintf(&b, "%d,%08X,%v,Rx,%d,%d,", r.Time.UnixMicro(), wire.CANID(r.ID), r.ID&wire.CANEFF != 0, bus, r.Len)
		for _, c := range r.Payload() {
			fmt.Fprintf(&b, "%02X,", c)
		}
		b.WriteString("\n")
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestHandWrittenAgainstCandump writes every reference log (its first
// maxPyFrames frames) as TRC 1.3 and 2.0 and SavvyCAN CSV, formats
// python-can neither writes nor reads, and checks fieldtap reads back the
// candump reader's frames: time to the format's resolution (TRC offsets
// from the start to 1 µs and $STARTTIME, ten decimals of a day as PEAK
// writes it, to 4.32 µs; CSV Unix µs, exact, its offset being Unix
// time), id, data, channel.
func TestHandWrittenAgainstCandump(t *testing.T) {
	total := map[string]int{}
	for _, log := range referenceLogs(t) {
		t.Run(filepath.Base(log), func(t *testing.T) {
			dir := t.TempDir()
			recs := clean(t, log, filepath.Join(dir, "clean.log"))
			var want []wire.CandumpRecord
			for _, r := range recs {
				if r.ID&(wire.CANRTR|wire.CANERR) == 0 {
					want = append(want, r)
				}
			}
			if len(want) == 0 {
				t.Skip("no data frame to convert")
			}
			for _, c := range []struct {
				file string
				read Reader
				ch   func(iface string) int
				tol  time.Duration
			}{
				{"v13.trc", ReadTRC, func(i string) int { return map[string]int{"can0": 1, "can1": 2}[i] }, trcStartRes},
				{"v20.trc", ReadTRC, func(string) int { return 1 }, trcStartRes},
				{"savvy.csv", ReadSavvyCSV, func(i string) int { return map[string]int{"can0": 0, "can1": 1}[i] }, 0},
			} {
				path := filepath.Join(dir, c.file)
				switch c.file {
				case "v13.trc":
					writeTRC(t, path, "1.3", recs)
				case "v20.trc":
					writeTRC(t, path, "2.0", recs)
				default:
					writeSavvyCSV(t, path, recs)
				}
				res := readWith(t, c.read, path)
				if len(res.bad) > 0 || len(res.frames) != len(want) {
					t.Fatalf("%s: %d frames, %v not read; want %d frames", c.file, len(res.frames), res.bad, len(want))
				}
				for i, f := range res.frames {
					w := want[i]
					off := w.Time.Sub(want[0].Time)
					if d := f.Time.Sub(w.Time).Abs(); d > c.tol || c.tol > 0 && (f.Offset-off).Abs() > time.Microsecond || f.ID != w.ID || !bytes.Equal(f.Data, w.Payload()) || f.Channel != c.ch(string(w.Interface)) {
						t.Fatalf("%s frame %d: %v %#x % X ch %d; candump %v %#x % X %s", c.file, i, f.Time, f.ID, f.Data, f.Channel, w.Time, w.ID, w.Payload(), w.Interface)
					}
				}
				total[c.file] += len(res.frames)
			}
		})
	}
	t.Logf("frames compared with the candump reader: %v", total)
}
