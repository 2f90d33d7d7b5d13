package daemon

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"fieldtap/drivers/wire"
	"fieldtap/services/ports"
	"fieldtap/services/ring"
	"fieldtap/services/rtp"
	"fieldtap/services/sandbox"
)

// TestOpenCaptureAddsAPortAtRunTime: a candump log copied into the
// capture directory becomes a read-only CAN port that counts its frames;
// names outside the directory and symbolic links are refused.
func TestOpenCaptureAddsAPortAtRunTime(t *testing.T) {
	dir := t.TempDir()
	var log []byte
	t0 := time.Unix(1_800_000_000, 0)
	for i := range 25 {
		log = wire.AppendCandump(log, t0.Add(time.Duration(i)*10*time.Millisecond), "can0", 0x18FEF100|wire.CANEFF, []byte{1, 2, byte(i)})
	}
	os.WriteFile(filepath.Join(dir, "truck.log"), log, 0o644)
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("not a capture\n"), 0o644)
	outside := filepath.Join(t.TempDir(), "elsewhere.log")
	os.WriteFile(outside, log, 0o644)
	os.Symlink(outside, filepath.Join(dir, "link.log"))

	an, err := newAnalysers(ring.Limits{Items: 100, Bytes: 1 << 20}, t.TempDir(), t.TempDir(), rtp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	files, err := sandbox.New(sandbox.Root{Name: capturesRoot, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	var reg ports.Registry
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	o := newCaptureOpener(files, an, &reg, &recording{why: "off"}, 64, 1, quiet)
	if _, err := o.OpenCapture(context.Background(), "truck.log"); !errors.Is(err, ErrCaptureRefused) {
		t.Errorf("open before the ports run: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	o.start(ctx, &wg)
	st, err := o.OpenCapture(context.Background(), "truck.log")
	if err != nil {
		t.Fatal(err)
	}
	if st.Name != "file2" || st.Kind != "can" || st.Live || st.RecorderReason == "" {
		t.Errorf("opened port %+v: want file2 (after one --source), can, not live, not recorded", st)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		ps := reg.Snapshot()
		if len(ps) == 1 && ps[0].SourceExhausted && ps[0].Frames == 25 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("port never read the file: %+v", ps)
		}
	}
	for _, name := range []string{"../" + filepath.Base(filepath.Dir(outside)) + "/elsewhere.log", "link.log", outside, "notes.txt", "missing.log"} {
		if _, err := o.OpenCapture(context.Background(), name); !errors.Is(err, ErrCaptureRefused) {
			t.Errorf("open %q: %v, want ErrCaptureRefused", name, err)
		}
	}
	ents, _, err := o.Captures()
	if err != nil || len(ents) != 2 {
		t.Errorf("captures %+v %v: want truck.log and notes.txt (not the link)", ents, err)
	}
}
