package recorder

import (
	"bytes"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fieldtap/drivers/wire"
)

// TestCANFDFramesDecodeInTshark records classic and CAN FD frames and has
// tshark read the segment: each FD frame is dissected as CAN FD (its
// protocol column CANFD, tshark 4.0's "Controller Area Network FD") with
// the length and BRS/ESI bits written, each classic frame as CAN. The recorder's own scan gives every frame back byte for byte.
func TestCANFDFramesDecodeInTshark(t *testing.T) {
	r := open(t, Options{Dir: t.TempDir()})
	defer r.Close()
	p := r.Port("can0")
	type fr struct {
		id    uint32
		flags uint8
		n     int
	}
	frames := []fr{
		{0x123, wire.CANFDFDF | wire.CANFDBRS, 12},
		{0x18FECA00 | wire.CANEFF, wire.CANFDFDF | wire.CANFDBRS | wire.CANFDESI, 64},
		{0x7FF, 0, 8},
		{0x0CF00400 | wire.CANEFF, wire.CANFDFDF, 0},
		{0x456, wire.CANFDFDF | wire.CANFDESI, 5},
		{0x1FFFFFFF | wire.CANEFF, wire.CANFDFDF, 48},
	}
	var written [][]byte
	for i, f := range frames {
		data := make([]byte, f.n)
		for k := range data {
			data[k] = byte(i + k)
		}
		b, err := wire.AppendCANFrame(nil, f.id, f.flags, data)
		if err != nil {
			t.Fatal(err)
		}
		written = append(written, b)
		p.Write(t0.Add(time.Duration(i)*time.Millisecond), wire.LinkCANSocketCAN, b, 0)
	}
	r.Flush()
	n := 0
	if _, err := r.Scan(t.Context(), Query{From: t0, To: t0.Add(time.Second)}, func(f *Frame) error {
		if !bytes.Equal(f.Data, written[n]) {
			t.Errorf("frame %d read back % x, wrote % x", n, f.Data, written[n])
		}
		n++
		return nil
	}); err != nil || n != len(frames) {
		t.Fatalf("scan: %d frames, %v", n, err)
	}
	if _, err := exec.LookPath("tshark"); err != nil {
		t.Skip("tshark is not installed: it is the reference for the CAN FD pcap layout (.ci/run installs it)")
	}
	out, err := exec.Command("tshark", "-r", filepath.Join(r.opt.Dir, r.Segments()[0].Name), "-T", "fields", "-E", "separator=,",
		"-e", "_ws.col.Protocol", "-e", "can.id", "-e", "can.len", "-e", "canfd.flags.brs", "-e", "canfd.flags.esi", "-e", "can.flags.xtd").Output()
	if err != nil {
		t.Fatalf("tshark: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != len(frames) {
		t.Fatalf("tshark shows %d frames, want %d:\n%s", len(lines), len(frames), out)
	}
	for i, f := range frames {
		proto, bit := "CAN", func(uint8) string { return "" }
		if f.flags != 0 {
			proto = "CANFD"
			bit = func(b uint8) string {
				if f.flags&b != 0 {
					return "1"
				}
				return "0"
			}
		}
		xtd := "0"
		if f.id&wire.CANEFF != 0 {
			xtd = "1"
		}
		want := fmt.Sprintf("%d,%d,%s,%s,%s", wire.CANID(f.id), f.n, bit(wire.CANFDBRS), bit(wire.CANFDESI), xtd)
		fields := strings.SplitN(lines[i], ",", 2)
		if fields[0] != proto || fields[1] != want {
			t.Errorf("frame %d: tshark %q, want protocol %s and %s", i, lines[i], proto, want)
		}
	}
}
