package canfiles

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"fieldtap/drivers/wire"
	"fieldtap/tools/refdata"
)

// fuzzSeedFrames bounds the frames a seed takes from a reference log: a
// short seed keeps each run fast and holds every line shape.
const fuzzSeedFrames = 40

// seedRecords is the head of each reference log, as the tests write them
// out in every format; none when the reference folder is absent.
func seedRecords(f *testing.F) [][]wire.CandumpRecord {
	dir := refdata.Path(f, "can")
	var out [][]wire.CandumpRecord
	for _, g := range []string{"*.candump", "*.log", "*.txt"} {
		paths, _ := filepath.Glob(filepath.Join(dir, g))
		for _, p := range paths {
			recs := clean(f, p, filepath.Join(f.TempDir(), "seed.log"))
			if len(recs) > fuzzSeedFrames {
				recs = recs[:fuzzSeedFrames]
			}
			if len(recs) > 0 {
				out = append(out, recs)
			}
		}
	}
	return out
}

// addRealSeeds adds python-can's test logs of extension ext.
func addRealSeeds(f *testing.F, ext string) {
	paths, _ := filepath.Glob(filepath.Join(realDir, "*"+ext))
	for _, p := range paths {
		if b, err := os.ReadFile(p); err == nil && len(b) <= 8<<10 {
			f.Add(b)
		}
	}
}

// fuzzRead reads b with read and checks what every reader promises: no
// panic, no error (bad records are counted, never fatal; BLF refuses a
// file without its header, mayRefuse), every frame one
// wire.EncodeCAN takes, every reason a known one.
func fuzzRead(t *testing.T, read Reader, b []byte, mayRefuse bool) {
	err := read(bytes.NewReader(b), func(f *Frame) error {
		if _, err := wire.AppendCANFrame(nil, f.ID, f.Flags, f.Data); err != nil {
			t.Fatalf("a frame no can_frame holds: %v", err)
		}
		if f.Offset < 0 || f.Offset > maxOffset {
			t.Fatalf("offset %v", f.Offset)
		}
		return nil
	}, func(_ int64, reason string, _ error) {
		switch reason {
		case ReasonMalformed, ReasonOverlong, ReasonContainer, ReasonOther:
		default:
			t.Fatalf("reason %q", reason)
		}
	})
	if err != nil && !mayRefuse {
		t.Fatalf("read: %v", err)
	}
}

func FuzzReadASC(f *testing.F) {
	for _, recs := range seedRecords(f) {
		start := wire.ASCStart(recs[0].Time)
		b := wire.AppendASCHeader(nil, start)
		for _, r := range recs {
			b = wire.AppendASC(b, start, r.Time, r.ID, r.Flags, r.Payload())
		}
		f.Add(wire.AppendASCEnd(b))
	}
	f.Add([]byte(ascSample))
	addRealSeeds(f, ".asc")
	f.Fuzz(func(t *testing.T, b []byte) { fuzzRead(t, ReadASC, b, false) })
}

func FuzzReadBLF(f *testing.F) {
	for _, recs := range seedRecords(f) {
		w := wire.NewBLFWriter(wire.ASCStart(recs[0].Time))
		for _, r := range recs {
			w.Add(r.Time, r.ID, r.Flags, r.Payload())
		}
		f.Add(w.Bytes())
	}
	f.Add(append(appendSystemTime(f, epoch), blfContainer(0, blfObject(1, 5, make([]byte, 16)))...))
	// CAN FD objects: CAN_FD_MESSAGE (EDL and BRS, 64 bytes) and
	// CAN_FD_MESSAGE_64 (EDL and ESI, 12 bytes).
	fd := make([]byte, 84)
	fd[0], fd[3], fd[13], fd[14] = 1, 15, 1|2, 64
	fd64 := make([]byte, 40+12)
	fd64[0], fd64[1], fd64[2], fd64[13] = 1, 9, 12, 0x50
	f.Add(append(appendSystemTime(f, epoch), blfContainer(0, append(blfObject(100, 5, fd), blfObject(101, 6, fd64)...))...))
	addRealSeeds(f, ".blf")
	f.Fuzz(func(t *testing.T, b []byte) {
		// A file that is not BLF at all is refused; anything after a
		// header is read to its end.
		if bytes.HasPrefix(b, []byte(blfFileMagic)) && len(b) >= 144 && b[4] == 144 && b[5] == 0 && b[6] == 0 && b[7] == 0 {
			err := ReadBLF(bytes.NewReader(b), func(*Frame) error { return nil }, func(int64, string, error) {})
			if err != nil {
				t.Fatalf("read: %v", err)
			}
		}
		fuzzRead(t, ReadBLF, b, true)
	})
}

func FuzzReadTRC(f *testing.F) {
	dir := f.TempDir()
	for _, recs := range seedRecords(f) {
		for _, v := range []string{"1.1", "1.3", "2.0"} {
			p := filepath.Join(dir, "seed.trc")
			writeTRC(f, p, v, recs)
			if b, err := os.ReadFile(p); err == nil {
				f.Add(b)
			}
		}
	}
	f.Add([]byte(trc21Sample))
	addRealSeeds(f, ".trc")
	f.Fuzz(func(t *testing.T, b []byte) { fuzzRead(t, ReadTRC, b, false) })
}

func FuzzReadSavvyCSV(f *testing.F) {
	dir := f.TempDir()
	for _, recs := range seedRecords(f) {
		p := filepath.Join(dir, "seed.csv")
		writeSavvyCSV(f, p, recs)
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("Time Stamp,ID,Extended,Bus,LEN,D1,D2\n1,7FF,false,0,2,01,02,\n2,123,maybe,0,1,00\n"))
	f.Add([]byte("Time Stamp,ID,Extended,Bus,LEN,D1,D2\n1,7FF,false,0,12,00,01,02,03,04,05,06,07,08,09,0A,0B\n"))
	if b, err := os.ReadFile(filepath.Join("testdata", "savvycan", "GVRET_Log_head.csv")); err == nil {
		f.Add(b[:4<<10])
	}
	f.Fuzz(func(t *testing.T, b []byte) { fuzzRead(t, ReadSavvyCSV, b, false) })
}
