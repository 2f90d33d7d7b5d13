package recorder

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// smallDisk mounts a tmpfs of size bytes for the test, or skips.
func smallDisk(t *testing.T, size string) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size); err != nil {
		t.Skipf("cannot mount a small tmpfs to fill (needs root): %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, 0) })
	return dir
}

// TestDiskFullDropsToRAMOnly fills a real (small) file system: the
// recorder says ram_only with the reason, counts what it could not
// record in an open gap, and resumes in a new segment once space returns.
func TestDiskFullDropsToRAMOnly(t *testing.T) {
	mnt := smallDisk(t, "3m")
	filler := filepath.Join(mnt, "filler")
	if err := os.WriteFile(filler, make([]byte, 2<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	c := &clock{t: t0}
	r := open(t, Options{Dir: filepath.Join(mnt, "rec"), Now: c.now, SegmentBytes: MinSegmentBytes, QuotaBytes: 4 * MinSegmentBytes, MaxPendingBytes: MinPendingBytes})
	defer r.Close()
	p := r.Port("span0")
	big := make([]byte, 1400)
	at := t0
	n := 0
	for i := 0; i < 200 && r.Status().State == StateRecording; i++ {
		for range 40 {
			p.Write(at, 1, big, 0)
			at = at.Add(time.Millisecond)
			n++
		}
		r.Flush()
		c.add(FlushInterval)
	}
	st := r.Status()
	if st.State != StateRAMOnly || st.Reason != "disk full: frames are kept in RAM only" || st.WriteErrors == 0 {
		t.Fatalf("status after filling the disk: %s %q, %d write errors", st.State, st.Reason, st.WriteErrors)
	}
	for range 10 {
		p.Write(at, 1, big, 0)
		at = at.Add(time.Millisecond)
		n++
	}
	ps := p.Status()
	if ps.State != StateRAMOnly || ps.NotRecorded < 10 || ps.LastGap == nil || ps.LastGap.Reason != GapDiskError || ps.LastGap.To != nil {
		t.Fatalf("port status while ram_only: %+v", ps)
	}
	lost := ps.NotRecorded
	os.Remove(filler)
	c.add(retryEvery)
	r.Flush()
	if st := r.Status(); st.State != StateRecording {
		t.Fatalf("after space returned: %s %q", st.State, st.Reason)
	}
	p.Write(at, 1, big, 0)
	n++
	r.Flush()
	gaps := r.Gaps()
	g := gaps[len(gaps)-1]
	if g.Reason != GapDiskError || g.To == nil || g.NotRecorded["span0"] != lost || g.Detail == "" {
		t.Errorf("disk gap %+v", g)
	}
	got, sc := readAll(t, r, Query{})
	if uint64(len(got))+lost != uint64(n) || len(sc.Corrupt) != 0 {
		t.Errorf("recorded %d + lost %d of %d written; corrupt %v", len(got), lost, n, sc.Corrupt)
	}
	if _, err := exec.LookPath("tshark"); err == nil {
		for _, s := range r.Segments() {
			if out, err := exec.Command("tshark", "-r", filepath.Join(r.opt.Dir, s.Name), "-q").CombinedOutput(); err != nil {
				t.Errorf("tshark on %s: %v\n%s", s.Name, err, out)
			}
		}
	}
}

// TestFullDiskMakesRoomFromTheOldest: when space does not come back, each
// retry frees the oldest unpinned segment until the ring turns again.
func TestFullDiskMakesRoomFromTheOldest(t *testing.T) {
	mnt := smallDisk(t, "3m")
	if err := os.WriteFile(filepath.Join(mnt, "filler"), make([]byte, 1<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	c := &clock{t: t0}
	r := open(t, Options{Dir: filepath.Join(mnt, "rec"), Now: c.now, SegmentBytes: MinSegmentBytes, QuotaBytes: 8 * MinSegmentBytes, MaxPendingBytes: MinPendingBytes})
	defer r.Close()
	p := r.Port("span0")
	big := make([]byte, 1400)
	at := t0
	failed, resumed := false, false
	for i := 0; i < 400 && !resumed; i++ {
		for range 40 {
			p.Write(at, 1, big, 0)
			at = at.Add(time.Millisecond)
		}
		r.Flush()
		c.add(time.Second)
		st := r.Status()
		if st.State == StateRAMOnly {
			failed = true
		} else if failed {
			resumed = st.Deleted > 0
		}
	}
	st := r.Status()
	if !failed || !resumed {
		t.Fatalf("failed %v, resumed after deleting %v: %+v", failed, resumed, st)
	}
	if st.GapsTotal != 1 {
		t.Errorf("%d gaps for one full-disk episode: %+v", st.GapsTotal, st.Gaps)
	}
}
