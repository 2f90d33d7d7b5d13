package canbus

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"fieldtap/drivers/wire"
)

// TestExportASCAndBLFReadByPythonCAN exports a port whose store kept the
// newest 100 of 1000 frames (the rest in the recorder) as ASC and as BLF,
// and has python-can's ASCReader and BLFReader (Debian's python3-can, the
// ground truth) read both files back: the 1000 frames, a quarter of them
// CAN FD (lengths 1 to 64, BRS and ESI in turn), oldest first, each
// within 1 µs of its time with its id, kind, FD flags and data.
func TestExportASCAndBLFReadByPythonCAN(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 123456789, time.UTC)
	var all []exportFrame
	for i := range 1000 {
		f := exportFrame{at: t0.Add(time.Duration(i) * 1234567 * time.Nanosecond), id: uint32(0x18FEF100 | wire.CANEFF), data: []byte{byte(i >> 8), byte(i)}}
		switch i % 4 {
		case 1:
			f.id, f.data = 0x123, []byte{1, 2, 3, 4, 5, 6, 7, byte(i)}
		case 2:
			f.id, f.data = 0x7FF|wire.CANRTR, nil
		case 3:
			// python-can 4.1 reads an ASC CANFD line of no data as a remote
			// frame: FD frames here carry 1 to 64 bytes.
			f.id, f.flags = 0x1ABCDEF|wire.CANEFF, wire.CANFDFDF|uint8(i/4%4)
			n := wire.CANFDPadded(1 + i/4%64)
			f.data = nil
			if i/4%2 == 1 {
				f.id = 0x345
			}
			for j := range n {
				f.data = append(f.data, byte(i+j))
			}
		}
		all = append(all, f)
	}
	s, rec := storeAndRecord(t, all)
	dir := t.TempDir()
	var pairs []string
	for _, format := range []Format{FormatASC, FormatBLF} {
		x, err := s.ExportCandump(context.Background(), rec, "can0", Selection{Format: format})
		if err != nil {
			t.Fatal(err)
		}
		if x.Lines != 1000 || x.FromRecorder != 900 || x.Format != format || x.Candump != "" {
			t.Fatalf("%s: %d lines, %d from the recorder (cut %v), format %q", format, x.Lines, x.FromRecorder, x.RecorderCut, x.Format)
		}
		path := filepath.Join(dir, "x."+string(format))
		body := []byte(x.ASC)
		if format == FormatBLF {
			body = x.BLF
		}
		if err := os.WriteFile(path, body, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d bytes for %d frames", format, len(body), x.Lines)
		pairs = append(pairs, string(format), path)
	}
	for path, got := range pythonCANRead(t, pairs...) {
		if len(got) != len(all) {
			t.Fatalf("%s: python-can read %d frames, want %d", path, len(got), len(all))
		}
		for i, f := range all {
			g := got[i]
			ts, _ := strconv.ParseFloat(g.T, 64)
			want := float64(f.at.UnixNano()) / 1e9
			if math.Abs(ts-want) > 1e-6 || g.ID != wire.CANID(f.id) || g.Ext != (f.id&wire.CANEFF != 0) ||
				g.RTR != (f.id&wire.CANRTR != 0) || g.DLC != len(f.data) || g.Data != hex.EncodeToString(f.data) ||
				g.FD != (f.flags != 0) || g.BRS != (f.flags&wire.CANFDBRS != 0) || g.ESI != (f.flags&wire.CANFDESI != 0) {
				t.Fatalf("%s frame %d: python-can %+v; exported %v %#x % X", filepath.Base(path), i, g, f.at, f.id, f.data)
			}
		}
	}
}

type pyFrame struct {
	T    string `json:"t"`
	ID   uint32 `json:"id"`
	Ext  bool   `json:"ext"`
	RTR  bool   `json:"rtr"`
	FD   bool   `json:"fd"`
	BRS  bool   `json:"brs"`
	ESI  bool   `json:"esi"`
	DLC  int    `json:"dlc"`
	Data string `json:"data"`
}

// pythonCANRead has python-can read each (kind, path) pair with
// drivers/canfiles' helper script, skipping when python3-can is absent.
func pythonCANRead(t *testing.T, pairs ...string) map[string][]pyFrame {
	t.Helper()
	const python = "/usr/bin/python3"
	if _, err := os.Stat(python); err != nil {
		t.Skip("python3 is not installed (/usr/bin/python3 with Debian's python3-can is the ground truth)")
	}
	cmd := exec.Command(python, append([]string{"../../drivers/canfiles/testdata/pycan.py", "read"}, pairs...)...)
	cmd.Env = append(os.Environ(), "TZ=UTC")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == 3 {
		t.Skip("python3-can is not installed (Debian package python3-can): it is the ground truth")
	}
	if err != nil {
		t.Fatalf("pycan.py: %v\n%s", err, stderr.String())
	}
	var got map[string][]pyFrame
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	return got
}
