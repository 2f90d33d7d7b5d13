package canfiles

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"fieldtap/drivers/wire"
)

// writeVector writes recs as ASC and BLF with drivers/wire's writers,
// the ones export_canlog uses.
func writeVector(t *testing.T, dir string, recs []wire.CandumpRecord) (asc, blf string) {
	start := wire.ASCStart(recs[0].Time)
	b := wire.AppendASCHeader(nil, start)
	w := wire.NewBLFWriter(start)
	for _, r := range recs {
		b = wire.AppendASC(b, start, r.Time, r.ID, r.Flags, r.Payload())
		w.Add(r.Time, r.ID, r.Flags, r.Payload())
	}
	asc, blf = filepath.Join(dir, "x.asc"), filepath.Join(dir, "x.blf")
	if err := os.WriteFile(asc, wire.AppendASCEnd(b), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(blf, w.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return asc, blf
}

// TestWritersAgainstPythonCAN writes every reference log (its first
// maxPyFrames frames) with fieldtap's ASC and BLF writers and checks that
// python-can's ASCReader and BLFReader read back exactly the frames
// written: time within 1 µs, id, extended, remote, DLC, data, channel 1;
// and that fieldtap's readers agree.
func TestWritersAgainstPythonCAN(t *testing.T) {
	total := 0
	for _, log := range referenceLogs(t) {
		t.Run(filepath.Base(log), func(t *testing.T) {
			dir := t.TempDir()
			recs := clean(t, log, filepath.Join(dir, "clean.log"))
			if len(recs) == 0 {
				t.Skip("no frame to write")
			}
			asc, blf := writeVector(t, dir, recs)
			py := pyRead(t, "asc", asc, "blf", blf)
			for _, f := range []struct {
				path string
				read Reader
			}{{asc, ReadASC}, {blf, ReadBLF}} {
				// python-can's reading against the frames written (channel 1,
				// python-can's 0).
				var written []Frame
				for _, r := range recs {
					written = append(written, Frame{Time: r.Time, ID: r.ID, DLC: r.Len, Data: r.Payload(), Channel: 1, Flags: r.Flags})
				}
				compare(t, filepath.Base(f.path)+" by python-can", written, py[f.path], true, time.Microsecond, 1)
				res := readWith(t, f.read, f.path)
				if len(res.bad) > 0 && !(len(res.bad) == 1 && res.bad[ReasonOther] == 1) { // ASC's "Start of measurement"
					t.Errorf("%s: not read %v", f.path, res.bad)
				}
				compare(t, filepath.Base(f.path)+" by fieldtap", res.frames, py[f.path], true, time.Microsecond, 1)
			}
			total += len(recs)
		})
	}
	t.Logf("frames written and read back by python-can: %d each in ASC and BLF", total)
}
