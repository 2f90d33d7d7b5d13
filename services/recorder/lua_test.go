package recorder

import (
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"fieldtap/board/sim/j1708gen"
	"fieldtap/drivers/wire"
	"fieldtap/services/j1587"
)

// TestJ1708LuaDissector: docs/j1708.lua, run by tshark on a recorded
// segment, finds the MID and PIDs services/j1587 finds in every message,
// and flags the one with a bad checksum.
func TestJ1708LuaDissector(t *testing.T) {
	if _, err := exec.LookPath("tshark"); err != nil {
		t.Skip("tshark is not installed (apt-get install tshark)")
	}
	r := open(t, Options{Dir: t.TempDir()})
	defer r.Close()
	p := r.Port("j1708")
	var msgs [][]byte
	var links []uint16
	err := j1708gen.Generate(j1708gen.Options{Seed: 2, Start: t0, Duration: 5 * time.Second}, func(m j1708gen.Message) error {
		msgs, links = append(msgs, m.Data), append(links, wire.LinkJ1708)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// A page-2 PID, a variable-length PID, a J2497 message, a bad checksum.
	for _, m := range [][]byte{{128, 255, 7, 9, 0}, {136, 194, 2, 1, 2, 0}, {137, 84, 10, 0}, {128, 84, 1, 0}} {
		var s byte
		for _, b := range m[:len(m)-1] {
			s += b
		}
		m[len(m)-1] = -s
		msgs, links = append(msgs, m), append(links, wire.LinkJ1708)
	}
	links[len(links)-2] = wire.LinkJ2497
	msgs[len(msgs)-1][len(msgs[len(msgs)-1])-1]++ // the last one's checksum no longer sums to 0
	for i, m := range msgs {
		p.Write(t0.Add(time.Duration(i)*time.Millisecond), links[i], m, 0)
	}
	r.Flush()
	seg := filepath.Join(r.opt.Dir, r.Segments()[0].Name)
	lua, _ := filepath.Abs(filepath.Join("..", "..", "docs", "j1708.lua"))
	out, err := exec.Command("tshark", "-X", "lua_script:"+lua, "-r", seg, "-T", "fields", "-E", "separator=|",
		"-e", "j1708.mid", "-e", "j1708.pid", "-e", "j1708.checksum.status", "-e", "j1708.j2497").Output()
	if err != nil {
		t.Fatalf("tshark: %v", err)
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) != len(msgs) {
		t.Fatalf("tshark dissected %d frames, %d recorded", len(lines), len(msgs))
	}
	var d j1587.Decoder
	for i, l := range lines {
		cols := strings.Split(l, "|")
		err := d.Decode(msgs[i])
		var pids []string
		for _, prm := range d.Params {
			pids = append(pids, strconv.Itoa(int(prm.PID)))
		}
		wantStatus := "Good"
		if err == j1587.ErrChecksum {
			wantStatus, pids = "Bad", cols[1:2] // services/j1587 stops at a bad checksum
		}
		if err != nil && err != j1587.ErrChecksum {
			t.Fatalf("frame %d (% x): %v", i+1, msgs[i], err)
		}
		j2497 := "0"
		if links[i] == wire.LinkJ2497 {
			j2497 = "1"
		}
		want := []string{strconv.Itoa(int(msgs[i][0])), strings.Join(pids, ","), wantStatus, j2497}
		for j, w := range want {
			if cols[j] != w {
				t.Errorf("frame %d (% x): tshark %q, services/j1587 %q", i+1, msgs[i], cols, want)
				break
			}
		}
	}
}
