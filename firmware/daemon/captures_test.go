package daemon

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"fieldtap/drivers/capture"
	"fieldtap/drivers/wire"
	"fieldtap/firmware/config"
	"fieldtap/services/budget"
	"fieldtap/services/ports"
	"fieldtap/services/rtp"
	"fieldtap/services/sandbox"
)

// TestOpenCaptureIsRefusedOutsideTheBudget: every store's bound is planned
// from the memory budget at start-up, so with no store.opened_captures a
// capture opened while the box runs is refused, saying why, rather than
// holding memory no budget counts; names outside the directory and
// symbolic links are refused before that.
func TestOpenCaptureIsRefusedOutsideTheBudget(t *testing.T) {
	dir := t.TempDir()
	log := truckLog(25)
	os.WriteFile(filepath.Join(dir, "truck.log"), log, 0o644)
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("not a capture\n"), 0o644)
	outside := filepath.Join(t.TempDir(), "elsewhere.log")
	os.WriteFile(outside, log, 0o644)
	os.Symlink(outside, filepath.Join(dir, "link.log"))

	an := testAnalysers(t, rtp.Options{}, testSource{name: "file1", kind: capture.KindCAN})
	files, err := sandbox.New(sandbox.Root{Name: capturesRoot, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	var reg ports.Registry
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	o := &captureOpener{files: files, an: an, reg: &reg, rec: &recording{why: "off"}, depth: 64, next: 2, log: quiet}
	if _, err := o.OpenCapture(context.Background(), "truck.log"); !errors.Is(err, ErrCaptureRefused) {
		t.Errorf("open before the ports run: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	o.start(ctx, &wg)
	if _, err := o.OpenCapture(context.Background(), "truck.log"); !errors.Is(err, ErrCaptureRefused) || !strings.Contains(err.Error(), "store.opened_captures is 0") {
		t.Errorf("open a capture the budget has no share for: %v", err)
	}
	if ps := reg.Snapshot(); len(ps) != 0 {
		t.Errorf("a refused capture was listed: %+v", ps)
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

// TestOpenCaptureUsesItsReservedShare: with store.opened_captures = 1 the
// plan holds a port of every kind under the name the capture will take;
// a candump log opens as that port, every frame reaches the CAN store,
// and a second open is refused: its memory was never planned.
func TestOpenCaptureUsesItsReservedShare(t *testing.T) {
	dir := t.TempDir()
	log := truckLog(25)
	os.WriteFile(filepath.Join(dir, "truck.log"), log, 0o644)
	plan, an := oneCaptureAnalysers(t)
	for _, store := range []string{budget.Frames, budget.CANFrames, budget.J1939Tables, budget.J1708Messages, budget.Handoff} {
		if n, ok := plan.Share(store, "file1"); !ok || n <= 0 {
			t.Errorf("no %s share for the opened capture's port", store)
		}
	}
	o, _ := readOpenedCapture(t, an, dir, "truck.log", 25)
	if _, err := o.OpenCapture(context.Background(), "truck.log"); !errors.Is(err, ErrCaptureRefused) || !strings.Contains(err.Error(), "all that store.opened_captures (1)") {
		t.Errorf("a second open: %v, want it refused for want of a planned share", err)
	}
}

// truckLog is a candump log of n frames of one J1939 PGN, 10 ms apart.
func truckLog(n int) []byte {
	var log []byte
	t0 := time.Unix(1_800_000_000, 0)
	for i := range n {
		log = wire.AppendCandump(log, t0.Add(time.Duration(i)*10*time.Millisecond), "can0", 0x18FEF100|wire.CANEFF, []byte{1, 2, byte(i)})
	}
	return log
}

// oneCaptureAnalysers plans a box of board none with store.opened_captures
// = 1 and builds its stores.
func oneCaptureAnalysers(t *testing.T) (budget.Plan, *analysers) {
	t.Helper()
	cfg := config.Default()
	cfg.Board, cfg.Store.ExportDir, cfg.Store.DataDir, cfg.Store.OpenedCaptures = config.BoardNone, t.TempDir(), t.TempDir(), new(1)
	return analysersOf(t, cfg, rtp.Options{})
}

// readOpenedCapture opens name in dir through a running opener of an's one
// planned capture slot, waits until its port, file1 of kind can, has read
// it to the end, and checks that port and the CAN store both hold want
// frames. The opener stops when the test ends.
func readOpenedCapture(t *testing.T, an *analysers, dir, name string, want int) (*captureOpener, *ports.Registry) {
	t.Helper()
	files, err := sandbox.New(sandbox.Root{Name: capturesRoot, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	reg := new(ports.Registry)
	o := &captureOpener{files: files, an: an, reg: reg, rec: &recording{why: "off"}, depth: 64, slots: 1, next: 1, log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	o.start(ctx, &wg)
	st, err := o.OpenCapture(context.Background(), name)
	if err != nil || st.Name != "file1" || st.Kind != "can" {
		t.Fatalf("open: %+v %v, want port file1 of kind can", st, err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if ps := reg.Snapshot(); len(ps) == 1 && ps[0].SourceExhausted {
			if ps[0].Frames != uint64(want) {
				t.Errorf("file1 read %d frames, want %d", ps[0].Frames, want)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("file1 never finished: %+v", reg.Snapshot())
		}
	}
	if p := an.can.Lookup("file1"); p == nil || p.Frames().Len() != want {
		t.Errorf("the CAN store does not hold file1's %d frames", want)
	}
	return o, reg
}
