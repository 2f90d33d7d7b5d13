package recorder

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"fieldtap/drivers/pcapfile"
	"fieldtap/drivers/wire"
	"fieldtap/tools/refdata"
)

var t0 = time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)

// clock is a settable time source for segment ages, names and gaps.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

func open(t *testing.T, o Options) *Recorder {
	t.Helper()
	r, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// frame is one test frame: a port, a link type and a counter in its data.
type frame struct {
	port string
	link uint16
	at   time.Time
	data []byte
}

func ethFrame(i int) []byte {
	b := make([]byte, 60)
	b[12], b[13] = 0x08, 0x00
	b[20], b[21] = byte(i>>8), byte(i)
	return b
}

func canFrame(i int) []byte {
	b, _ := wire.EncodeCAN(0x18FEF100|wire.CANEFF, []byte{byte(i >> 8), byte(i), 3, 4, 5, 6, 7, 8})
	return b
}

// traffic is n frames on three ports, 10 ms apart.
func traffic(n int) []frame {
	var out []frame
	for i := range n {
		at := t0.Add(time.Duration(i) * 10 * time.Millisecond)
		switch i % 3 {
		case 0:
			out = append(out, frame{"span0", 1, at, ethFrame(i)})
		case 1:
			out = append(out, frame{"can0", wire.LinkCANSocketCAN, at, canFrame(i)})
		default:
			link := uint16(wire.LinkJ1708)
			if i%6 == 5 {
				link = wire.LinkJ2497
			}
			out = append(out, frame{"j1708", link, at, []byte{128, 190, byte(i), byte(i >> 8), 0}})
		}
	}
	return out
}

func record(r *Recorder, fs []frame) {
	ports := map[string]*Port{}
	for _, f := range fs {
		p := ports[f.port]
		if p == nil {
			p = r.Port(f.port)
			ports[f.port] = p
		}
		p.Write(f.at, f.link, f.data, 0)
	}
}

func readAll(t *testing.T, r *Recorder, q Query) ([]frame, ScanStats) {
	t.Helper()
	if q.From.IsZero() {
		q.From, q.To = t0.Add(-time.Hour), t0.Add(24*time.Hour)
	}
	var out []frame
	st, err := r.Scan(context.Background(), q, func(f *Frame) error {
		out = append(out, frame{f.Port, f.Link, f.Time, bytes.Clone(f.Data)})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out, st
}

// sameFrames compares per port, in order: Scan keeps each port's order.
func sameFrames(t *testing.T, got, want []frame) {
	t.Helper()
	byPort := func(fs []frame) map[string][]frame {
		m := map[string][]frame{}
		for _, f := range fs {
			m[f.port] = append(m[f.port], f)
		}
		return m
	}
	g, w := byPort(got), byPort(want)
	if len(got) != len(want) {
		t.Fatalf("%d frames, want %d", len(got), len(want))
	}
	for port, wf := range w {
		gf := g[port]
		if len(gf) != len(wf) {
			t.Fatalf("port %s: %d frames, want %d", port, len(gf), len(wf))
		}
		for i := range wf {
			if gf[i].link != wf[i].link || !gf[i].at.Equal(wf[i].at) || !bytes.Equal(gf[i].data, wf[i].data) {
				t.Fatalf("port %s frame %d: %+v, want %+v", port, i, gf[i], wf[i])
			}
		}
	}
}

func TestCloseLosesNothingAndReopenTrustsTheIndex(t *testing.T) {
	dir := t.TempDir()
	c := &clock{t: t0}
	r := open(t, Options{Dir: dir, Now: c.now})
	want := traffic(300)
	record(r, want[:150])
	r.Flush()
	c.add(time.Second)
	record(r, want[150:])
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	r = open(t, Options{Dir: dir, Now: c.now})
	defer r.Close()
	rec := r.Status().Recovery
	if rec.Unclean || rec.Trusted != 1 || len(rec.Scanned) != 0 || rec.Gap == nil || rec.Gap.Reason != GapStopped {
		t.Errorf("recovery after Close = %+v", rec)
	}
	got, st := readAll(t, r, Query{})
	sameFrames(t, got, want)
	if st.Cut || len(st.Corrupt) != 0 {
		t.Errorf("scan stats %+v", st)
	}
	segs := r.Segments()
	if len(segs) != 1 || segs[0].Frames != 300 || segs[0].Open {
		t.Fatalf("segments %+v", segs)
	}
	if !regexp.MustCompile(`^fieldtap_00000_20261201080000\.pcapng$`).MatchString(segs[0].Name) {
		t.Errorf("segment name %s does not follow PREFIX_NNNNN_YYYYMMDDhhmmss.pcapng", segs[0].Name)
	}
	ports := map[string]PortIndex{}
	for _, p := range segs[0].Ports {
		ports[p.Port] = p
	}
	if ports["can0"].Frames != 100 || len(ports["j1708"].Links) != 2 {
		t.Errorf("index ports %+v", ports)
	}
}

// TestKillLosesOnlyWhatWasNotWritten: frames written before a kill are
// recovered from the open segment; its torn tail is cut and the gap says
// where each port stopped.
func TestKillLosesOnlyWhatWasNotWritten(t *testing.T) {
	dir := t.TempDir()
	c := &clock{t: t0}
	r := open(t, Options{Dir: dir, Now: c.now})
	all := traffic(90)
	record(r, all[:60])
	r.Flush()
	record(r, all[60:]) // never written: the kill comes first
	name := r.Segments()[0].Name
	r.abandon()
	// A torn block at the tail, as a power cut mid-write leaves it.
	f, err := os.OpenFile(filepath.Join(dir, name), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte{6, 0, 0, 0, 64, 0, 0, 0, 1, 2, 3})
	f.Close()

	c.add(time.Minute)
	r = open(t, Options{Dir: dir, Now: c.now})
	defer r.Close()
	rec := r.Status().Recovery
	if !rec.Unclean || len(rec.Scanned) != 1 || rec.Scanned[0].CutBytes != 11 || rec.Scanned[0].Frames != 60 {
		t.Fatalf("recovery %+v", rec)
	}
	g := rec.Gap
	if g == nil || g.Reason != GapUncleanStop || !g.From.Equal(all[59].at) || g.To == nil || !g.To.Equal(t0.Add(time.Minute)) {
		t.Fatalf("gap %+v", g)
	}
	if !g.PortsLast["span0"].Equal(all[57].at) || !g.PortsLast["j1708"].Equal(all[59].at) {
		t.Errorf("ports last %v", g.PortsLast)
	}
	got, _ := readAll(t, r, Query{})
	sameFrames(t, got, all[:60])
	if ps := r.Port("can0").Status(); ps.LastGap == nil || ps.LastGap.Reason != GapUncleanStop {
		t.Errorf("port status after restart %+v: want the gap shown", ps)
	}
	// Recovered, the segment is closed: its index is trusted next time.
	if _, err := os.Stat(filepath.Join(dir, name+indexExt)); err != nil {
		t.Error(err)
	}
}

func TestSecondRecorderIsRefused(t *testing.T) {
	dir := t.TempDir()
	r := open(t, Options{Dir: dir})
	defer r.Close()
	if _, err := Open(Options{Dir: dir}); !errors.Is(err, ErrInUse) {
		t.Fatalf("second Open: %v, want ErrInUse", err)
	}
}

// TestSegmentsCloseAtSizeAndAge and the quota deletes the oldest first,
// keeping pinned ones; a smaller quota at the next start applies to what
// the listing finds.
func TestRotationQuotaAndPins(t *testing.T) {
	dir := t.TempDir()
	c := &clock{t: t0}
	o := Options{Dir: dir, Now: c.now, SegmentBytes: MinSegmentBytes, SegmentAge: time.Minute, QuotaBytes: 8 * MinSegmentBytes}
	r := open(t, o)
	p := r.Port("span0")
	big := make([]byte, 1400)
	at := t0
	write := func(n int) {
		for range n {
			p.Write(at, 1, big, 0)
			at = at.Add(time.Millisecond)
		}
		r.Flush()
	}
	for range 4 {
		write(200) // ~290 KB a flush: a segment holds three
		c.add(FlushInterval)
	}
	segs := r.Segments()
	if len(segs) != 2 || segs[0].Bytes > MinSegmentBytes || !segs[1].Open {
		t.Fatalf("after 4 flushes of 290 KB: %+v", names(segs))
	}
	c.add(time.Minute)
	r.Flush() // the quiet open segment reaches its age
	if segs := r.Segments(); len(segs) != 2 || segs[1].Open {
		t.Fatalf("an aged segment stays open: %v", names(segs))
	}
	// Pin the first segment's time range, then write enough to pass the quota.
	first := r.Segments()[0]
	pin, err := r.Pin(*first.First, *first.Last, "test")
	if err != nil {
		t.Fatal(err)
	}
	for range 40 {
		write(200)
		c.add(FlushInterval)
	}
	st := r.Status()
	if st.Bytes > o.QuotaBytes || st.Deleted == 0 {
		t.Errorf("ring holds %d bytes of a %d quota after %d deletions", st.Bytes, o.QuotaBytes, st.Deleted)
	}
	segs = r.Segments()
	if segs[0].Name != first.Name || !segs[0].Pinned || segs[1].Pinned {
		t.Errorf("pinned segment %s not kept first: %v", first.Name, names(segs))
	}
	if err := r.Unpin(pin.ID); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	// Across a restart, from the listing: a smaller quota deletes the oldest.
	o.QuotaBytes = 4 * MinSegmentBytes
	r = open(t, o)
	defer r.Close()
	if st := r.Status(); st.Bytes > o.QuotaBytes {
		t.Errorf("after restart with a smaller quota: %d bytes", st.Bytes)
	}
	if segs := r.Segments(); segs[0].Name == first.Name {
		t.Errorf("unpinned oldest %s survived a smaller quota", first.Name)
	}
}

func names(segs []SegmentInfo) []string {
	var out []string
	for _, s := range segs {
		out = append(out, s.Name+map[bool]string{true: " (open)", false: ""}[s.Open])
	}
	return out
}

// TestScanSeeksToItsWindow: a narrow window reads a fraction of the
// segment and returns exactly the frames inside it.
func TestScanSeeksToItsWindow(t *testing.T) {
	c := &clock{t: t0}
	r := open(t, Options{Dir: t.TempDir(), Now: c.now})
	defer r.Close()
	all := traffic(3000) // 30 s of frames
	for i := 0; i < len(all); i += 100 {
		record(r, all[i:i+100])
		r.Flush()
		c.add(time.Second) // a seek mark per flush
	}
	from, to := t0.Add(12*time.Second), t0.Add(14*time.Second)
	got, st := readAll(t, r, Query{From: from, To: to})
	var want []frame
	for _, f := range all {
		if !f.at.Before(from) && f.at.Before(to) {
			want = append(want, f)
		}
	}
	sameFrames(t, got, want)
	size := r.Segments()[0].Bytes
	if st.BytesRead*4 > size {
		t.Errorf("a 2 s window of 30 s read %d of %d bytes", st.BytesRead, size)
	}
	// Ports filter.
	got, _ = readAll(t, r, Query{From: from, To: to, Ports: []string{"can0"}})
	for _, f := range got {
		if f.port != "can0" {
			t.Fatalf("port filter let %s through", f.port)
		}
	}
}

func TestScanStopsAtItsByteBound(t *testing.T) {
	r := open(t, Options{Dir: t.TempDir()})
	defer r.Close()
	record(r, traffic(3000))
	r.Flush()
	var calls int
	st, err := r.Scan(context.Background(), Query{From: t0, To: t0.Add(time.Hour), MaxBytes: 10_000, Progress: func(Progress) { calls++ }},
		func(*Frame) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	if !st.Cut || st.CutAt == nil || st.BytesRead > 10_000+200 || calls == 0 {
		t.Errorf("stats %+v, progress calls %d", st, calls)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := r.Scan(ctx, Query{From: t0, To: t0.Add(time.Hour)}, func(*Frame) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled scan: %v", err)
	}
	if _, err := r.Scan(context.Background(), Query{From: t0}, func(*Frame) error { return nil }); err == nil {
		t.Error("a query without an end was accepted")
	}
}

// TestBufferFullIsCountedAndSaid: frames past MaxPendingBytes are not
// recorded, a gap opens, and the next recorded frame's comment says so.
func TestBufferFullIsCountedAndSaid(t *testing.T) {
	r := open(t, Options{Dir: t.TempDir(), MaxPendingBytes: MinPendingBytes})
	defer r.Close()
	p := r.Port("span0")
	big := make([]byte, 1000)
	for i := range 100 {
		p.Write(t0.Add(time.Duration(i)*time.Millisecond), 1, big, 0)
	}
	ps := p.Status()
	if ps.NotRecorded == 0 || ps.Frames+ps.NotRecorded != 100 || ps.LastGap == nil || ps.LastGap.Reason != GapBufferFull {
		t.Fatalf("port status %+v", ps)
	}
	r.Flush()
	p.Write(t0.Add(time.Second), 1, []byte{1}, 0)
	r.Flush()
	gaps := r.Gaps()
	if len(gaps) != 1 || gaps[0].To == nil || gaps[0].NotRecorded["span0"] != ps.NotRecorded {
		t.Errorf("gaps %+v", gaps)
	}
	if _, err := exec.LookPath("tshark"); err == nil {
		out, _ := exec.Command("tshark", "-r", filepath.Join(r.opt.Dir, r.Segments()[0].Name), "-T", "fields", "-e", "frame.comment").Output()
		if !strings.Contains(string(out), "not recorded (buffer_full)") {
			t.Errorf("tshark shows no comment on the frame after the drop: %q", out)
		}
	}
}

func TestHeadersOnlyKeepsTheWireLength(t *testing.T) {
	r := open(t, Options{Dir: t.TempDir()})
	defer r.Close()
	p := r.Port("span0")
	p.WriteHeaders(t0, 1, make([]byte, 214), 0, 54)
	r.Flush()
	var got Frame
	r.Scan(context.Background(), Query{From: t0, To: t0.Add(time.Second)}, func(f *Frame) error { got = *f; return nil })
	if len(got.Data) != 54 || got.OrigLen != 214 || p.Status().Trimmed != 1 {
		t.Errorf("frame %d/%d bytes, trimmed %d", len(got.Data), got.OrigLen, p.Status().Trimmed)
	}
}

// TestRefillTakesTheNewestThatFit reads the newest segments within the
// budget, oldest of them first, and says older ones stayed on disk.
func TestRefillTakesTheNewestThatFit(t *testing.T) {
	dir := t.TempDir()
	c := &clock{t: t0}
	o := Options{Dir: dir, Now: c.now, SegmentBytes: MinSegmentBytes, SegmentAge: time.Minute}
	r := open(t, o)
	all := traffic(30000)
	for i := 0; i < len(all); i += 500 {
		record(r, all[i:i+500])
		r.Flush()
		c.add(time.Second)
	}
	r.Close()
	r = open(t, o)
	defer r.Close()
	segs := r.Segments()
	var total int64
	for _, s := range segs {
		total += s.Bytes
	}
	budget := total / 2
	var got []frame
	rs, err := r.Refill(context.Background(), budget, func(f *Frame) error {
		got = append(got, frame{f.Port, f.Link, f.Time, bytes.Clone(f.Data)})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if rs.Bytes > budget || rs.Bytes < budget/2 || !rs.Older || rs.To == nil || !rs.To.Equal(all[len(all)-1].at) {
		t.Fatalf("refill %+v of %d bytes on disk", rs, total)
	}
	// What it gave is the tail of the traffic, in order per port.
	var want []frame
	for _, f := range all {
		if !f.at.Before(*rs.From) {
			want = append(want, f)
		}
	}
	sameFrames(t, got, want)
	if pr := r.Port("can0").Status().Refilled; pr == nil || pr.Frames != rs.Ports["can0"].Frames {
		t.Errorf("port refill %+v", pr)
	}
}

// TestInterfacesSurviveRotation: a port that first appears in a later
// segment, and ports declared before a rotation, read back under their
// own names in every segment.
func TestInterfacesSurviveRotation(t *testing.T) {
	c := &clock{t: t0}
	r := open(t, Options{Dir: t.TempDir(), Now: c.now, SegmentAge: time.Second})
	defer r.Close()
	all := traffic(60)
	record(r, all[:30:30])
	r.Flush()
	c.add(2 * time.Second)
	record(r, all[30:])
	r.Port("late").Write(t0.Add(time.Second), 1, ethFrame(9), 0)
	r.Flush()
	if n := len(r.Segments()); n != 2 {
		t.Fatalf("%d segments, want 2", n)
	}
	got, _ := readAll(t, r, Query{})
	sameFrames(t, got, append(append([]frame(nil), all...), frame{"late", 1, t0.Add(time.Second), ethFrame(9)}))
}

func TestFind(t *testing.T) {
	r := open(t, Options{Dir: t.TempDir()})
	defer r.Close()
	all := traffic(300)
	record(r, all)
	r.Flush()
	q := Query{From: t0, To: t0.Add(time.Hour)}
	// matched counts matches, not frames read (300 every time), and
	// the first match past the limit where the search stopped.
	cases := []struct {
		name    string
		m       Match
		limit   int
		want    int
		trunc   bool
		matched uint64
	}{
		{name: "CAN id", m: Match{HasCAN: true, CANID: 0x18FEF100 | wire.CANEFF}, want: 100, matched: 100},
		{name: "CAN id under a mask", m: Match{HasCAN: true, CANID: 0x00FEF100, CANMask: 0x00FFFF00}, want: 100, matched: 100},
		{name: "other CAN id", m: Match{HasCAN: true, CANID: 0x18FEF200 | wire.CANEFF}, want: 0, matched: 0},
		{name: "J1708 MID", m: Match{HasMID: true, MID: 128}, want: 100, matched: 100},
		{name: "bytes", m: Match{Contains: []byte{0, 42}}, limit: 5, want: 1, matched: 1}, // span0 frame 42's counter
		{name: "limit", m: Match{HasMID: true, MID: 128}, limit: 10, want: 10, trunc: true, matched: 11},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, err := r.Find(context.Background(), q, tc.m, tc.limit)
			if err != nil {
				t.Fatal(err)
			}
			if len(f.Hits) != tc.want || f.Truncated != tc.trunc {
				t.Errorf("%d hits (truncated %v), want %d (%v)", len(f.Hits), f.Truncated, tc.want, tc.trunc)
			}
			if f.Scan.Matched != tc.matched {
				t.Errorf("scan.matched %d (%d frames read), want %d", f.Scan.Matched, f.Scan.Frames, tc.matched)
			}
		})
	}
}

// TestReadFramesAtScannedOffsets reads back frames by the offsets a scan
// reported, in a segment whose interfaces were declared at its start and
// later.
func TestReadFramesAtScannedOffsets(t *testing.T) {
	r := open(t, Options{Dir: t.TempDir()})
	defer r.Close()
	all := traffic(90)
	record(r, all[:30])
	r.Flush()
	r.Port("late").Write(t0.Add(time.Hour), 1, ethFrame(7), 0)
	record(r, all[30:])
	r.Flush()
	var offs []int64
	var seg string
	var want []frame
	r.Scan(context.Background(), Query{From: t0, To: t0.Add(2 * time.Hour)}, func(f *Frame) error {
		if f.Port == "late" || f.Port == "can0" {
			offs, seg = append(offs, f.Offset), f.Segment
			want = append(want, frame{f.Port, f.Link, f.Time, bytes.Clone(f.Data)})
		}
		return nil
	})
	var got []frame
	missing, err := r.ReadFrames(context.Background(), seg, append(offs, 3), func(f *Frame) error {
		got = append(got, frame{f.Port, f.Link, f.Time, bytes.Clone(f.Data)})
		return nil
	})
	if err != nil || missing != 1 {
		t.Fatalf("missing %d (want 1: offset 3 is not a frame), err %v", missing, err)
	}
	sameFrames(t, got, want)
}

// BenchmarkPortWrite is the consumer's cost per frame: encoding one
// enhanced packet block into the pending buffer (the disk write happens
// on the recorder's own goroutine every FlushInterval).
func BenchmarkPortWrite(b *testing.B) {
	for _, size := range []int{16, 200, 1400} {
		b.Run("bytes="+strconv.Itoa(size), func(b *testing.B) {
			r, err := Open(Options{Dir: b.TempDir()})
			if err != nil {
				b.Fatal(err)
			}
			defer r.Close()
			p := r.Port("span0")
			data := make([]byte, size)
			b.ReportAllocs()
			b.SetBytes(int64(size))
			n := 0
			for b.Loop() {
				p.Write(t0, 1, data, 0)
				if n++; n%2000 == 0 {
					b.StopTimer()
					r.Flush()
					b.StartTimer()
				}
			}
		})
	}
}

// BenchmarkFlush is the recorder goroutine's cost per 100 ms batch of
// 1000 frames of 200 bytes (2 MB/s): one write, the index, no sync.
func BenchmarkFlush(b *testing.B) {
	r, err := Open(Options{Dir: b.TempDir(), SegmentBytes: MaxSegmentBytes, QuotaBytes: 8 * MaxSegmentBytes})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	p := r.Port("span0")
	data := make([]byte, 200)
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		for range 1000 {
			p.Write(t0, 1, data, 0)
		}
		b.StartTimer()
		r.Flush()
	}
}

// TestConcurrentWritersAndReaders: ports write from their own goroutines
// while the recorder flushes and rotates and readers scan and ask for
// status; after Close every frame is on disk, each port's in order.
func TestConcurrentWritersAndReaders(t *testing.T) {
	dir := t.TempDir()
	r := open(t, Options{Dir: dir, SegmentBytes: MinSegmentBytes, QuotaBytes: 64 * MinSegmentBytes})
	const perPort = 5000
	ports := []string{"span0", "can0", "j1708"}
	var writers, others sync.WaitGroup
	done := make(chan struct{})
	others.Add(2)
	go func() {
		defer others.Done()
		for {
			select {
			case <-done:
				return
			default:
				r.Flush()
			}
		}
	}()
	go func() {
		defer others.Done()
		for {
			select {
			case <-done:
				return
			default:
				r.Status()
				r.Segments()
				r.Scan(context.Background(), Query{From: t0, To: t0.Add(time.Hour)}, func(*Frame) error { return nil })
			}
		}
	}()
	for pi, name := range ports {
		writers.Add(1)
		go func() {
			defer writers.Done()
			p := r.Port(name)
			for i := range perPort {
				p.Write(t0.Add(time.Duration(i)*time.Millisecond), uint16(pi+1), ethFrame(i), 0)
				if i%500 == 499 {
					// The flusher above may not be scheduled on a busy
					// machine: these flushes make the segments rotate.
					r.Flush()
				}
			}
		}()
	}
	writers.Wait()
	close(done)
	others.Wait()
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	r = open(t, Options{Dir: dir, SegmentBytes: MinSegmentBytes, QuotaBytes: 64 * MinSegmentBytes})
	defer r.Close()
	got, _ := readAll(t, r, Query{})
	counts := map[string]int{}
	for _, f := range got {
		if want := int(f.data[20])<<8 | int(f.data[21]); want != counts[f.port] {
			t.Fatalf("%s: frame %d carries counter %d", f.port, counts[f.port], want)
		}
		counts[f.port]++
	}
	for _, name := range ports {
		if counts[name] != perPort {
			t.Errorf("%s: %d frames on disk, %d written", name, counts[name], perPort)
		}
	}
	if n := len(r.Segments()); n < 2 {
		t.Errorf("%d segments: the test meant to rotate under load", n)
	}
}

// watchSyncs replaces fdatasync for one test: each call is checked by
// check (its error returned), then synced for real.
func watchSyncs(t *testing.T, check func(path string) error) {
	real := fdatasync
	fdatasync = func(f *os.File) error {
		if err := check(f.Name()); err != nil {
			return err
		}
		return real(f)
	}
	t.Cleanup(func() { fdatasync = real })
}

// After a kill the segment's tail may be in the page cache only; the
// index recovery writes must not reach the disk before those bytes, or a
// power cut leaves a trusted index over a tail of zeros (the emulated
// board's power-cut check saw tshark refuse such a segment).
func TestRecoverySyncsTheSegmentBeforeItsIndex(t *testing.T) {
	dir := t.TempDir()
	c := &clock{t: t0}
	r := open(t, Options{Dir: dir, Now: c.now})
	record(r, traffic(30))
	r.Flush() // written, not yet synced: a whole tail, nothing to cut
	name := r.Segments()[0].Name
	r.abandon()

	seg := filepath.Join(dir, name)
	var synced bool
	watchSyncs(t, func(path string) error {
		if path == seg {
			if _, err := os.Stat(seg + indexExt); err == nil {
				t.Errorf("%s synced after its index was written", name)
			}
			synced = true
		}
		return nil
	})
	c.add(time.Minute)
	r = open(t, Options{Dir: dir, Now: c.now})
	defer r.Close()
	if rec := r.Status().Recovery; len(rec.Scanned) != 1 || rec.Scanned[0].CutBytes != 0 || rec.Scanned[0].Frames != 30 {
		t.Fatalf("recovery %+v: want one segment scanned whole", rec)
	}
	if !synced {
		t.Errorf("recovery wrote %s's index without syncing the segment", name)
	}
}

// A segment whose last sync failed is closed without an index, so the
// next start scans it instead of trusting bytes that may not be on disk.
func TestCloseWithoutDurableBytesWritesNoIndex(t *testing.T) {
	dir := t.TempDir()
	c := &clock{t: t0}
	r := open(t, Options{Dir: dir, Now: c.now})
	record(r, traffic(30))
	r.Flush()
	name := r.Segments()[0].Name
	failing := true
	watchSyncs(t, func(path string) error {
		if failing && path == filepath.Join(dir, name) {
			return errors.New("injected: EIO")
		}
		return nil
	})
	r.Close()
	failing = false
	if _, err := os.Stat(filepath.Join(dir, name+indexExt)); !os.IsNotExist(err) {
		t.Fatalf("index of %s after a failed sync: %v", name, err)
	}
	r = open(t, Options{Dir: dir, Now: c.now})
	defer r.Close()
	if rec := r.Status().Recovery; rec.Trusted != 0 || len(rec.Scanned) != 1 || rec.Scanned[0].Frames != 30 {
		t.Errorf("recovery %+v: want the segment scanned, not trusted", rec)
	}
}

// A segment whose header did not reach the disk is never used: the
// recorder drops to RAM-only with the error, counts the batch as not
// recorded, removes the file, and starts a new segment at its next try.
func TestFailedSegmentStartIsNotTrusted(t *testing.T) {
	dir := t.TempDir()
	c := &clock{t: t0}
	r := open(t, Options{Dir: dir, Now: c.now})
	defer r.Close()
	failing := true
	watchSyncs(t, func(path string) error {
		if failing && filepath.Ext(path) == segmentExt {
			return fmt.Errorf("injected: %w", syscall.EIO)
		}
		return nil
	})
	record(r, traffic(30))
	r.Flush()
	st := r.Status()
	if st.State != StateRAMOnly || st.Reason != "disk I/O error: frames are kept in RAM only" || st.WriteErrors != 1 {
		t.Fatalf("after the header's sync failed: %s %q, %d write errors; want ram_only", st.State, st.Reason, st.WriteErrors)
	}
	gaps := r.Gaps()
	if len(gaps) != 1 || gaps[0].Reason != GapDiskError || !strings.Contains(gaps[0].Detail, "injected") {
		t.Errorf("gaps %+v: want one open disk_error gap naming the sync's error", gaps)
	}
	lost := uint64(0)
	for _, n := range gaps[0].NotRecorded {
		lost += n
	}
	if lost != 30 {
		t.Errorf("%d frames counted as not recorded, want 30", lost)
	}
	if segs, _ := filepath.Glob(filepath.Join(dir, "*"+segmentExt)); len(segs) != 0 || len(r.Segments()) != 0 {
		t.Errorf("segments %v on disk, %d listed: want none kept", segs, len(r.Segments()))
	}

	failing = false
	c.add(retryEvery)
	r.Flush()
	record(r, traffic(30))
	r.Flush()
	if st := r.Status(); st.State != StateRecording {
		t.Fatalf("after the disk came back: %s %q", st.State, st.Reason)
	}
	if got, _ := readAll(t, r, Query{}); len(got) != 30 {
		t.Errorf("%d frames read back, want the 30 written after the retry", len(got))
	}
}

// TestFindOpensTunnels: find matches addresses and ports of the mirrored
// packet inside VXLAN on the configured ports, and still the tunnel's own
// endpoints; the counts are tshark's for the same capture (ip.addr and
// udp.port match any layer there too).
func TestFindOpensTunnels(t *testing.T) {
	if _, err := exec.LookPath("tshark"); err != nil {
		t.Skip("tshark is not installed: it is the reference for the tunnel capture (.ci/run installs it)")
	}
	path := filepath.Join("..", "netdecode", "testdata", "tunnels", "kernel-vxlan8472.pcap")
	tsharkCount := func(filter string) int {
		out, err := exec.Command("tshark", "-r", path, "-d", "udp.port==8472,vxlan", "-Y", filter).Output()
		if err != nil {
			t.Fatalf("tshark %s: %v", filter, err)
		}
		return strings.Count(string(out), "\n")
	}
	for _, tc := range []struct {
		name  string
		ports []uint16
		m     Match
		want  int
	}{
		{"mirrored host", []uint16{4789, 8472}, Match{Host: netip.MustParseAddr("10.33.6.100")}, tsharkCount("ip.addr==10.33.6.100")},
		{"mirrored port", []uint16{4789, 8472}, Match{L4Port: 6000}, tsharkCount("udp.port==6000")},
		{"tunnel endpoint", []uint16{4789, 8472}, Match{Host: netip.MustParseAddr("192.0.2.1")}, tsharkCount("ip.addr==192.0.2.1")},
		{"port 8472 not VXLAN here", nil, Match{Host: netip.MustParseAddr("10.33.6.100")}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := open(t, Options{Dir: t.TempDir(), VXLANPorts: tc.ports})
			defer r.Close()
			p := r.Port("span0")
			var first, last time.Time
			refdata.EachRecord(t, path, func(rec pcapfile.Record) {
				if first.IsZero() {
					first = rec.Time
				}
				last = rec.Time
				p.Write(rec.Time, uint16(rec.Link), rec.Data, 0)
			})
			r.Flush()
			f, err := r.Find(context.Background(), Query{From: first, To: last.Add(time.Second)}, tc.m, MaxFindHits)
			if err != nil {
				t.Fatal(err)
			}
			if tc.ports != nil && tc.want == 0 {
				t.Fatal("tshark matched no frame: the case checks nothing")
			}
			if len(f.Hits) != tc.want {
				t.Errorf("%d hits, want %d", len(f.Hits), tc.want)
			}
		})
	}
}
