package canbus

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"fieldtap/drivers/wire"
	"fieldtap/services/recorder"
	"fieldtap/services/ring"
)

// TestExportReadsWhatTheStoreEvicted: a port whose ring kept the newest
// 100 of 1000 frames exports all 1000, the older 900 from the recorder,
// oldest first, filtered as can_frames filters. Every third frame is CAN
// FD, of up to 64 bytes: it leaves as a `##` line from either side.
func TestExportReadsWhatTheStoreEvicted(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	var all []exportFrame
	for i := range 1000 {
		id := uint32(0x18FEF100 | wire.CANEFF)
		if i%2 == 1 {
			id = 0x0CF00400 | wire.CANEFF
		}
		f := exportFrame{t0.Add(time.Duration(i) * 10 * time.Millisecond), id, 0, []byte{byte(i >> 8), byte(i)}}
		if i%3 == 0 {
			f.flags = wire.CANFDFDF | uint8(i/3%4)
			f.data = make([]byte, []int{2, 12, 64}[i/3%3])
			f.data[0], f.data[len(f.data)-1] = byte(i>>8), byte(i)
		}
		all = append(all, f)
	}
	s, rec := storeAndRecord(t, all)
	want := func(keep func(exportFrame) bool) string {
		var b []byte
		for _, f := range all {
			if keep(f) {
				b = wire.AppendCandumpFrame(b, f.at, "can0", f.id, f.flags, f.data)
			}
		}
		return string(b)
	}
	empty, err := New(ring.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name      string
		port      string
		store     *Store
		sel       Selection
		keep      func(exportFrame) bool
		fromRec   int
		truncated bool
	}{
		{name: "everything", port: "can0", store: s, keep: func(exportFrame) bool { return true }, fromRec: 900},
		{name: "one id", port: "can0", store: s, sel: Selection{HasID: true, ID: 0x0CF00400 | wire.CANEFF, Mask: wire.CANEFFMask | wire.CANEFF},
			keep: func(f exportFrame) bool { return f.id == 0x0CF00400|wire.CANEFF }, fromRec: 450},
		{name: "a window inside the recorder", port: "can0", store: s, sel: Selection{Since: t0.Add(time.Second), Until: t0.Add(2 * time.Second)},
			keep: func(f exportFrame) bool {
				return !f.at.Before(t0.Add(time.Second)) && f.at.Before(t0.Add(2*time.Second))
			}, fromRec: 100},
		{name: "cut at max lines", port: "can0", store: s, sel: Selection{MaxLines: 50}, keep: func(f exportFrame) bool { return f.at.Before(t0.Add(500 * time.Millisecond)) }, fromRec: 50, truncated: true},
		{name: "a port this run lacks", port: "can0", store: empty, keep: func(exportFrame) bool { return true }, fromRec: 1000},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.store.ExportCandump(context.Background(), rec, tc.port, tc.sel)
			if err != nil {
				t.Fatal(err)
			}
			if w := want(tc.keep); got.Candump != w {
				t.Errorf("candump differs: %d lines, want %d", got.Lines, strings.Count(w, "\n"))
			}
			if got.FromRecorder != tc.fromRec || got.Truncated != tc.truncated {
				t.Errorf("from recorder %d truncated %v, want %d %v", got.FromRecorder, got.Truncated, tc.fromRec, tc.truncated)
			}
		})
	}
	if _, err := s.ExportCandump(context.Background(), rec, "can0", Selection{HasID: true, ID: 0x123, Mask: wire.CANSFFMask}); !errors.Is(err, ErrNothingToExport) {
		t.Errorf("an export matching nothing: %v", err)
	}
	if _, err := s.ExportCandump(context.Background(), nil, "can9", Selection{}); err == nil {
		t.Error("an unknown port without a recorder exported")
	}
}

// exportFrame is a frame a test stores and exports.
type exportFrame struct {
	at    time.Time
	id    uint32
	flags uint8
	data  []byte
}

// storeAndRecord adds frames, oldest first, to port can0 of a store that
// keeps the newest 100 and to a recorder that keeps them all, as the
// daemon tees a port's frames. The recorder closes when the test ends.
func storeAndRecord(t *testing.T, frames []exportFrame) (*Store, *recorder.Recorder) {
	t.Helper()
	s, err := New(ring.Limits{Items: 100, Bytes: 100 * FDFrameBytes()})
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.Port("can0", 0)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := recorder.Open(recorder.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rec.Close() })
	rp := rec.Port("can0")
	for _, f := range frames {
		p.AddFrame(f.at, f.id, f.flags, f.data)
		b, _ := wire.AppendCANFrame(nil, f.id, f.flags, f.data)
		rp.Write(f.at, wire.LinkCANSocketCAN, b, 0)
	}
	rec.Flush()
	return s, rec
}
