package recorder

import (
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestMarksSurviveARestartBesideSegmentsTsharkReads: marks go to
// marks.json, come back after a restart, are bounded with the rest
// counted, and leave the segments plain pcapng (tshark counts every
// frame written).
func TestMarksSurviveARestartBesideSegmentsTsharkReads(t *testing.T) {
	dir := t.TempDir()
	r := open(t, Options{Dir: dir})
	fs := traffic(40)
	record(r, fs)
	t0 := fs[0].at
	for i := range 3 {
		if err := r.Mark(Mark{At: t0.Add(time.Duration(i) * time.Second), Label: "press " + strconv.Itoa(i), Source: "button"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	r = open(t, Options{Dir: dir})
	defer r.Close()
	ms, dropped := r.Marks()
	if len(ms) != 3 || dropped != 0 || ms[2].Label != "press 2" || !ms[1].At.Equal(t0.Add(time.Second)) {
		t.Fatalf("after restart: %+v dropped %d", ms, dropped)
	}
	for range maxMarks {
		if err := r.Mark(Mark{At: t0, Label: "x", Source: "mcp"}); err != nil {
			t.Fatal(err)
		}
	}
	if ms, dropped = r.Marks(); len(ms) != maxMarks || dropped != 3 {
		t.Errorf("%d marks kept, %d dropped; want %d and 3", len(ms), dropped, maxMarks)
	}
	if _, err := exec.LookPath("tshark"); err != nil {
		t.Skip("tshark not installed: the segments' readability is not checked")
	}
	total := 0
	for _, s := range r.Segments() {
		out, err := exec.Command("tshark", "-r", filepath.Join(dir, s.Name), "-T", "fields", "-e", "frame.number").Output()
		if err != nil {
			t.Fatalf("tshark on %s: %v", s.Name, err)
		}
		total += len(strings.Fields(string(out)))
	}
	if total != len(fs) {
		t.Errorf("tshark read %d frames, %d were recorded", total, len(fs))
	}
}
