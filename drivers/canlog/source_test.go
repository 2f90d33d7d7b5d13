package canlog

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fieldtap/drivers/capture"
	"fieldtap/drivers/capture/capturetest"
	"fieldtap/drivers/wire"
	"fieldtap/tools/refdata"
)

func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// readAll runs a Source over path and returns its frames and stats.
func readAll(t *testing.T, path string) ([]capture.Frame, capture.Stats) {
	t.Helper()
	var c capture.Counters
	h := capture.NewHandoff(1<<16, &c)
	s := New("file1", path, discard())
	done := make(chan []capture.Frame)
	go func() {
		var got []capture.Frame
		for f := range capturetest.Frames(h) {
			got = append(got, f)
		}
		done <- got
	}()
	if err := s.Run(context.Background(), h); err != nil {
		t.Fatal(err)
	}
	h.Close()
	return <-done, s.Stats()
}

func TestSourceSkipsBadLinesAndKeepsReading(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.log")
	body := "(1.000000) can0 123#01\n" +
		"(1.1) can0 " + strings.Repeat("A", 3*maxLine) + "#00\n" +
		"garbage\n" +
		"\n" +
		" (002.000000)  can0  18FEF100   [8]  00 11 22 33 44 55 66 77\n" +
		"(3.0) can0 7FF#" // last line without a newline
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	frames, st := readAll(t, path)
	if len(frames) != 3 {
		t.Fatalf("frames = %d, want 3", len(frames))
	}
	if st.Errors["overlong_line"] != 1 || st.Errors["malformed_line"] != 1 {
		t.Errorf("errors = %v, want one overlong and one malformed", st.Errors)
	}
	if !st.Exhausted || st.StoppedEarly != "" {
		t.Errorf("stats = %+v, want exhausted normally", st)
	}
}

// groundTruth is the part of GROUND_TRUTH.json this package can check.
type groundTruth struct {
	CanLogs []struct {
		File           string `json:"file"`
		Frames         int    `json:"frames"`
		Unparsed       int    `json:"unparsed_lines"`
		DistinctCANIDs int    `json:"distinct_can_ids"`
		Standard       int    `json:"standard_frames"`
		Extended       int    `json:"extended_frames"`
	} `json:"can_logs"`
}

// TestReferenceLogs reads every log of the reference set and checks the
// frame counts, malformed lines and distinct ids against GROUND_TRUTH.json.
func TestReferenceLogs(t *testing.T) {
	truthPath := refdata.File(t, "can", "GROUND_TRUTH.json")
	dir := filepath.Dir(truthPath)
	raw, err := os.ReadFile(truthPath)
	if err != nil {
		t.Fatal(err)
	}
	var gt groundTruth
	if err := json.Unmarshal(raw, &gt); err != nil {
		t.Fatal(err)
	}
	if len(gt.CanLogs) == 0 {
		t.Fatal("GROUND_TRUTH.json lists no logs")
	}
	for _, want := range gt.CanLogs {
		t.Run(want.File, func(t *testing.T) {
			if _, err := os.Stat(filepath.Join(dir, want.File)); err != nil {
				t.Skipf("%s is listed but held back from the folder", want.File)
			}
			frames, st := readAll(t, filepath.Join(dir, want.File))
			ids := map[uint32]bool{}
			std, ext := 0, 0
			for _, f := range frames {
				id, _, err := wire.DecodeCAN(f.Data)
				if err != nil {
					t.Fatal(err)
				}
				ids[id] = true
				if id&wire.CANEFF != 0 {
					ext++
				} else {
					std++
				}
			}
			bad := int(st.Errors["malformed_line"] + st.Errors["overlong_line"])
			if len(frames) != want.Frames || bad != want.Unparsed || len(ids) != want.DistinctCANIDs || std != want.Standard || ext != want.Extended {
				t.Errorf("frames %d unparsed %d ids %d std %d ext %d; want %d %d %d %d %d",
					len(frames), bad, len(ids), std, ext, want.Frames, want.Unparsed, want.DistinctCANIDs, want.Standard, want.Extended)
			}
		})
	}
}
