package canlog

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fieldtap/drivers/capture"
	"fieldtap/drivers/wire"
)

// fdFrame is one frame of the can-utils checks, as written and as read.
type fdFrame struct {
	id    uint32
	flags uint8
	data  []byte
}

// fdFrames mixes CAN FD frames of every flag and several lengths (padded
// and exact) with classic ones, 11- and 29-bit.
func fdFrames() []fdFrame {
	seq := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(i*7 + n)
		}
		return b
	}
	return []fdFrame{
		{id: 0x123, flags: wire.CANFDFDF | wire.CANFDBRS, data: seq(12)},
		{id: 0x18FECA00 | wire.CANEFF, flags: wire.CANFDFDF | wire.CANFDBRS | wire.CANFDESI, data: seq(64)},
		{id: 0x7FF, data: seq(8)},
		{id: 0x0CF00400 | wire.CANEFF, flags: wire.CANFDFDF, data: nil},
		{id: 0x456, flags: wire.CANFDFDF | wire.CANFDESI, data: seq(8)},
		{id: 0x18DA00F1 | wire.CANEFF, flags: wire.CANFDFDF, data: seq(20)},
		{id: 0x100, data: seq(3)},
		{id: 0x1FFFFFFF | wire.CANEFF, flags: wire.CANFDFDF | wire.CANFDBRS, data: seq(48)},
	}
}

// writeFD writes frames with Writer, 100 µs apart from t0, and returns the log.
func writeFD(t *testing.T, frames []fdFrame, t0 time.Time) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := NewWriter(&buf, "can0")
	for i, f := range frames {
		b, err := wire.AppendCANFrame(nil, f.id, f.flags, f.data)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.WriteFrame(capture.Frame{Time: t0.Add(time.Duration(i) * 100 * time.Microsecond), Link: wire.LinkCANSocketCAN, Data: b}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// canUtils runs a can-utils converter (-I in -O out, then args) in dir.
func canUtils(t *testing.T, dir, prog, in, out string, args ...string) {
	t.Helper()
	path, err := exec.LookPath(prog)
	if err != nil {
		t.Skipf("%s (Debian package can-utils) is not installed", prog)
	}
	cmd := exec.Command(path, append([]string{"-I", in, "-O", out}, args...)...)
	cmd.Dir = dir
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", prog, err, b)
	}
}

// TestWriterAgreesWithLog2asc has can-utils' log2asc read the Writer's
// candump -l (its parse_canframe is cansend's and canplayer's reader)
// and checks each ASC line it writes: CANFD lines carry BRS, ESI, DLC
// and length columns, classic ones the DLC.
func TestWriterAgreesWithLog2asc(t *testing.T) {
	dir := t.TempDir()
	frames := fdFrames()
	if err := os.WriteFile(filepath.Join(dir, "fd.log"), writeFD(t, frames, time.Unix(1_767_225_600, 0)), 0o644); err != nil {
		t.Fatal(err)
	}
	canUtils(t, dir, "log2asc", "fd.log", "fd.asc", "can0")
	asc, err := os.ReadFile(filepath.Join(dir, "fd.asc"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for line := range strings.Lines(string(asc)) {
		if f := strings.Fields(line); len(f) > 2 && f[0][0] >= '0' && f[0][0] <= '9' {
			got = append(got, strings.Join(f, " "))
		}
	}
	if len(got) != len(frames) {
		t.Fatalf("log2asc wrote %d frame lines, want %d:\n%s", len(got), len(frames), asc)
	}
	for i, f := range frames {
		id := fmt.Sprintf("%X", wire.CANID(f.id))
		if f.id&wire.CANEFF != 0 {
			id += "x"
		}
		var hex []string
		for _, b := range f.data {
			hex = append(hex, fmt.Sprintf("%02X", b))
		}
		var want string
		if f.flags&wire.CANFDFDF != 0 {
			// time CANFD channel dir id brs esi dlc len data…
			want = fmt.Sprintf("CANFD 1 Rx %s %d %d %x %d %s", id, f.flags&wire.CANFDBRS, f.flags&wire.CANFDESI>>1, wire.CANFDDLC(len(f.data)), len(f.data), strings.Join(hex, " "))
		} else {
			// time channel id dir d dlc data…
			want = fmt.Sprintf("1 %s Rx d %d %s", id, len(f.data), strings.Join(hex, " "))
		}
		line := strings.SplitN(got[i], " ", 2)[1]
		if !strings.HasPrefix(line, strings.TrimSpace(want)) {
			t.Errorf("frame %d: log2asc wrote\n  %s\nwant it to start\n  %s", i, line, want)
		}
	}
}

// TestReaderAgreesWithAsc2log goes the other way: can-utils' asc2log
// writes candump -l lines (with its direction suffix) from log2asc's ASC
// of the Writer's log, and the reader must get back every frame as it
// was written, flags and lengths included.
func TestReaderAgreesWithAsc2log(t *testing.T) {
	dir := t.TempDir()
	frames := fdFrames()
	if err := os.WriteFile(filepath.Join(dir, "fd.log"), writeFD(t, frames, time.Unix(1_767_225_600, 0)), 0o644); err != nil {
		t.Fatal(err)
	}
	canUtils(t, dir, "log2asc", "fd.log", "fd.asc", "can0")
	canUtils(t, dir, "asc2log", "fd.asc", "back.log")
	back, err := os.ReadFile(filepath.Join(dir, "back.log"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(back, []byte("##")) {
		t.Fatalf("asc2log wrote no CAN FD line:\n%s", back)
	}
	var got []fdFrame
	var times []time.Time
	err = ReadFile(bytes.NewReader(back), func(_ int, r *wire.CandumpRecord) error {
		got = append(got, fdFrame{id: r.ID, flags: r.Flags, data: bytes.Clone(r.Payload())})
		times = append(times, r.Time)
		return nil
	}, func(n int, reason string, err error) { t.Errorf("asc2log line %d: %s: %v", n, reason, err) })
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(frames) {
		t.Fatalf("read %d frames of asc2log's log, want %d:\n%s", len(got), len(frames), back)
	}
	for i, f := range frames {
		g := got[i]
		if g.id != f.id || g.flags != f.flags || !bytes.Equal(g.data, f.data) {
			t.Errorf("frame %d: read id %#x flags %#x % X, wrote id %#x flags %#x % X", i, g.id, g.flags, g.data, f.id, f.flags, f.data)
		}
		// asc2log restarts the clock at the current time; the spacing stays.
		if i > 0 {
			if d := times[i].Sub(times[i-1]); d != 100*time.Microsecond {
				t.Errorf("frame %d: %v after the one before, want 100µs", i, d)
			}
		}
	}
	t.Logf("%d frames, %d of them CAN FD, the same through log2asc and asc2log", len(frames), countFD(frames))
}

func countFD(frames []fdFrame) int {
	n := 0
	for _, f := range frames {
		if f.flags&wire.CANFDFDF != 0 {
			n++
		}
	}
	return n
}

// TestSourceCarriesFD reads a log of mostly 64-byte FD frames through the
// Source: batches end early rather than outgrow their buffer, and every
// frame comes out as the LINKTYPE_CAN_SOCKETCAN bytes AppendCANFD makes.
func TestSourceCarriesFD(t *testing.T) {
	var log []byte
	data := bytes.Repeat([]byte{0xA5}, 64)
	const n = 3 * batchFrames
	for i := range n {
		flags := uint8(wire.CANFDFDF | wire.CANFDBRS)
		if i%5 == 0 {
			flags = 0 // a classic frame now and then
		}
		d := data
		if flags == 0 {
			d = data[:8]
		}
		log = wire.AppendCandumpFrame(log, time.Unix(int64(i), 0), "can0", uint32(i%2048), flags, d)
	}
	path := filepath.Join(t.TempDir(), "fd.log")
	if err := os.WriteFile(path, log, 0o644); err != nil {
		t.Fatal(err)
	}
	frames, st := readAll(t, path)
	if len(frames) != n || len(st.Errors) != 0 {
		t.Fatalf("%d frames, errors %v; want %d and none", len(frames), st.Errors, n)
	}
	for i, f := range frames {
		id, flags, d, err := wire.DecodeCANFD(f.Data)
		if err != nil || id != uint32(i%2048) || (i%5 == 0) != (flags == 0) || len(d) != map[bool]int{true: 8, false: 64}[flags == 0] {
			t.Fatalf("frame %d: id %#x flags %#x %d bytes %v", i, id, flags, len(d), err)
		}
		if f.Time.Unix() != int64(i) {
			t.Fatalf("frame %d at %v", i, f.Time)
		}
	}
}
