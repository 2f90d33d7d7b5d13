package daemon

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"fieldtap/drivers/wire"
	"fieldtap/firmware/config"
	"fieldtap/services/coverage"
	"fieldtap/services/netdecode"
	"fieldtap/services/ports"
	"fieldtap/services/rtp"
	"fieldtap/services/sandbox"
	"fieldtap/services/trunk"
)

// TestOpenCaptureReadsAVendorLog: a BLF file (the writer export_canlog
// uses) with a CAN FD object appended opens through open_capture as a
// CAN port whose frames, the FD one with them, reach the CAN store, and
// CAN coverage names nothing of it as traffic not analysed.
func TestOpenCaptureReadsAVendorLog(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	w := wire.NewBLFWriter(t0)
	for i := range 25 {
		w.Add(t0.Add(time.Duration(i)*10*time.Millisecond), 0x18FEF100|wire.CANEFF, 0, []byte{1, 2, byte(i)})
	}
	blf := w.Bytes()
	// A CAN_FD_MESSAGE object with EDL set, outside any container.
	fd := []byte("LOBJ\x20\x00\x01\x00\x74\x00\x00\x00\x64\x00\x00\x00\x02\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00")
	body := make([]byte, 84)
	body[0], body[13], body[14] = 1, 1, 64
	os.WriteFile(filepath.Join(dir, "truck.bin"), append(append(blf, fd...), body...), 0o644)

	cfg := config.Default()
	one := 1
	cfg.Board, cfg.Store.ExportDir, cfg.Store.DataDir, cfg.Store.OpenedCaptures = config.BoardNone, t.TempDir(), t.TempDir(), &one
	plan, err := planBudget(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	an, err := newAnalysers(plan, cfg.Store, rtp.Options{}, netdecode.Options{}, trunk.Options{})
	if err != nil {
		t.Fatal(err)
	}
	files, err := sandbox.New(sandbox.Root{Name: capturesRoot, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	var reg ports.Registry
	o := &captureOpener{files: files, an: an, reg: &reg, rec: &recording{why: "off"}, depth: 64, slots: 1, next: 1, log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	o.start(ctx, &wg)
	st, err := o.OpenCapture(context.Background(), "truck.bin")
	if err != nil || st.Name != "file1" || st.Kind != "can" {
		t.Fatalf("open: %+v %v, want port file1 of kind can", st, err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if ps := reg.Snapshot(); len(ps) == 1 && ps[0].SourceExhausted {
			if ps[0].Frames != 26 {
				t.Errorf("file1 read %d frames, want 26", ps[0].Frames)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("file1 never finished: %+v", reg.Snapshot())
		}
	}
	if p := an.can.Lookup("file1"); p == nil || p.Frames().Len() != 26 {
		t.Errorf("the CAN store does not hold file1's 26 frames")
	}
	rep := an.coverageOf(&reg, coverage.Query{Families: coverage.CAN})
	for _, c := range rep.NotAnalysed {
		if c.Port == "file1" {
			t.Errorf("coverage names %+v of file1 as not analysed, want nothing", c)
		}
	}
}
