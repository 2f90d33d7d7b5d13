package hwtest

import (
	"context"
	"encoding/binary"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"fieldtap/drivers/wire"
	"fieldtap/services/recorder"
)

// diskBytes is the recorder disk: enough for the run at the board's
// traffic, small enough to make and read back in a moment.
const diskBytes = 64 << 20

// recorderDisk makes an ext4 image for the guest's recorder, or returns
// "" (the power-cut check then skips) when the host lacks e2fsprogs.
func recorderDisk(t *testing.T, dir string) string {
	t.Helper()
	mkfs, err := exec.LookPath("mkfs.ext4")
	if err != nil {
		t.Logf("no mkfs.ext4 (e2fsprogs): the guest records to its initramfs and the power-cut check skips")
		return ""
	}
	path := filepath.Join(dir, "recorder.img")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, diskBytes); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(mkfs, "-q", "-F", "-L", "fieldtap-rec", path).CombinedOutput(); err != nil {
		t.Fatalf("mkfs.ext4: %v\n%s", err, out)
	}
	return path
}

// counterMID marks the power-cut check's messages (Off-board
// Diagnostics #1), apart from the MID 128 the earlier checks send.
const counterMID = 172

// j1708Stream writes J1587 messages carrying a counter (PID 190's two
// bytes) into the pci-serial chardev every 20 ms until stop: the gaps
// the guest's J1708 framer sees.
func j1708Stream(t *testing.T, addr string, stop <-chan struct{}, sent *atomic.Int64, wg *sync.WaitGroup) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer c.Close()
		for n := 0; ; n++ {
			select {
			case <-stop:
				return
			default:
			}
			msg := []byte{counterMID, 190, byte(n), byte(n >> 8), 0}
			var s byte
			for _, b := range msg[:4] {
				s += b
			}
			msg[4] = -s
			if _, err := c.Write(msg); err != nil {
				return
			}
			sent.Store(int64(n + 1))
			time.Sleep(20 * time.Millisecond)
		}
	}()
}

// powerCut streams counted J1708 messages (and the guest's own CAN
// traffic), reads capture_status, waits 1.2 s (SyncInterval, one flush
// and margin), kills QEMU, then reads the disk image back on the host:
// every frame counted before the wait must be on disk, the J1708
// counters without a hole, every segment readable by tshark.
func powerCut(t *testing.T, ctx context.Context, cs *sdk.ClientSession, b *board, disk, dir string) {
	if disk == "" {
		t.Skip("no recorder disk (mkfs.ext4 missing on the host)")
	}
	if !b.console.has(DiskMounted) {
		t.Fatalf("the guest did not mount the recorder disk:\n%s", strings.Join(b.console.grep("hwtest: "), "\n"))
	}
	for _, tool := range []string{"e2fsck", "debugfs"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s on the host (e2fsprogs): cannot read the disk back", tool)
		}
	}
	stop := make(chan struct{})
	var sent atomic.Int64
	var wg sync.WaitGroup
	j1708Stream(t, b.j1708Addr, stop, &sent, &wg)
	defer func() { close(stop); wg.Wait() }()
	time.Sleep(4 * time.Second)
	before := map[string]uint64{}
	var j1708Errors map[string]uint64
	for _, p := range captureStatus(t, ctx, cs).ports {
		before[p.Name] = p.Frames
		if p.Name == "j1708" {
			j1708Errors = p.Errors
		}
	}
	polled := time.Now()
	time.Sleep(recorder.SyncInterval + 200*time.Millisecond)
	cut := time.Now()
	if err := b.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	b.cmd.Wait()
	t.Logf("QEMU killed %v after capture_status answered; %d J1708 messages sent", cut.Sub(polled).Round(time.Millisecond), sent.Load())

	// The host reads the image as the box's next boot would: the journal
	// replayed (e2fsck), the recorder's directory recovered.
	if out, err := exec.Command("e2fsck", "-fy", disk).CombinedOutput(); err != nil {
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() >= 4 {
			t.Fatalf("e2fsck: %v\n%s", err, out)
		}
	}
	out := filepath.Join(dir, "recovered")
	os.MkdirAll(out, 0o700)
	if o, err := exec.Command("debugfs", "-R", "rdump /recorder "+out, disk).CombinedOutput(); err != nil {
		t.Fatalf("debugfs rdump: %v\n%s", err, o)
	}
	rdir := filepath.Join(out, "recorder")
	r, err := recorder.Open(recorder.Options{Dir: rdir})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	rec := r.Status().Recovery
	t.Logf("recovery: unclean %v, %d trusted, scanned %+v", rec.Unclean, rec.Trusted, rec.Scanned)
	frames, last := map[string]uint64{}, map[string]time.Time{}
	var counters []int
	_, err = r.Scan(ctx, recorder.Query{From: time.Unix(1, 0), To: time.Now().Add(time.Hour)}, func(f *recorder.Frame) error {
		frames[f.Port]++
		last[f.Port] = f.Time
		if f.Port == "j1708" && f.Link == wire.LinkJ1708 {
			for m := f.Data; len(m) >= 5 && m[0] == counterMID && m[1] == 190; m = m[5:] {
				counters = append(counters, int(binary.LittleEndian.Uint16(m[2:])))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, port := range []string{"j1708", "can0"} {
		if frames[port] < before[port] {
			t.Errorf("%s: %d frames on disk after the power cut, but %d were counted %v before it", port, frames[port], before[port], recorder.SyncInterval+200*time.Millisecond)
		}
		t.Logf("%s: %d frames counted before the wait, %d on disk, newest at %v", port, before[port], frames[port], last[port].Format(time.RFC3339Nano))
	}
	// A hole in the counters is the emulated UART's doing, not the
	// recorder's (the pty test in firmware/cmd/fieldtapd checks that no
	// delivered frame goes missing): the J1708 framer only sees gaps and
	// checksums, and a message TCG delivers in pieces can be lost there.
	holes := 0
	for i := 1; i < len(counters); i++ {
		if counters[i] != counters[i-1]+1 {
			holes++
		}
	}
	t.Logf("j1708: %d holes in the counters; the driver's errors before the cut: %v", holes, j1708Errors)
	if n := len(counters); n > 0 {
		t.Logf("j1708: counters %d..%d on disk of %d sent: %.0f ms of sending not on disk", counters[0], counters[n-1], sent.Load(),
			float64(sent.Load()-int64(counters[n-1])-1)*20)
	}
	if _, err := exec.LookPath("tshark"); err == nil {
		segs, _ := filepath.Glob(filepath.Join(rdir, "fieldtap_*.pcapng"))
		var n uint64
		for _, seg := range segs {
			o, err := exec.Command("tshark", "-r", seg, "-T", "fields", "-e", "frame.number").Output()
			if err != nil {
				t.Fatalf("tshark -r %s: %v", seg, err)
			}
			n += uint64(strings.Count(string(o), "\n"))
		}
		var want uint64
		for _, v := range frames {
			want += v
		}
		if n != want {
			t.Errorf("tshark reads %d frames in %d segments, the recorder %d", n, len(segs), want)
		}
	}
}
