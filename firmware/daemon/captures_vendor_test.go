package daemon

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"fieldtap/drivers/wire"
	"fieldtap/services/coverage"
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

	_, an := oneCaptureAnalysers(t)
	_, reg := readOpenedCapture(t, an, dir, "truck.bin", 26)
	rep := an.coverageOf(reg, coverage.Query{Families: coverage.CAN})
	for _, c := range rep.NotAnalysed {
		if c.Port == "file1" {
			t.Errorf("coverage names %+v of file1 as not analysed, want nothing", c)
		}
	}
}
