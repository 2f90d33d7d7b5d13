//go:build linux

package main

// Fault tests: the real binary loses a serial adapter mid-capture and
// must find it again, as it would after a USB glitch.

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sys/unix"

	"fieldtap/drivers/slcan/slcantest"
)

// ptyPlug is a serial adapter on a pty pair, reached through a stable
// symlink as udev's /dev/serial/by-id names are: unplugging closes both
// ends, plugging in again makes a new pair and points the link at it.
type ptyPlug struct {
	t      *testing.T
	link   string
	master *os.File
	slave  *os.File
	stop   context.CancelFunc
	done   chan struct{}
}

// plug opens a new pair, points p.link at its slave and starts feed on
// its master until the next unplug.
func (p *ptyPlug) plug(feed func(ctx context.Context, master *os.File)) {
	p.t.Helper()
	master, slave, err := pollablePty()
	if err != nil {
		p.t.Skipf("no pty available: %v", err)
	}
	tmp := p.link + ".new"
	os.Remove(tmp)
	if err := os.Symlink(slave.Name(), tmp); err != nil {
		p.t.Fatal(err)
	}
	if err := os.Rename(tmp, p.link); err != nil {
		p.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	p.master, p.slave, p.stop, p.done = master, slave, cancel, make(chan struct{})
	go func() { defer close(p.done); feed(ctx, master) }()
}

// pollablePty opens a pty pair whose master is in Go's poller, so Close
// unblocks a pending Read and really closes it: a blocking master being
// read by the simulated adapter would stay open, and the slave would never
// see its hangup.
func pollablePty() (master, slave *os.File, err error) {
	m, slave, err := pty.Open()
	if err != nil {
		return nil, nil, err
	}
	defer m.Close()
	// Close-on-exec, or fieldtapd would inherit the master and the line
	// would never hang up.
	fd, err := unix.FcntlInt(m.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		slave.Close()
		return nil, nil, err
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		slave.Close()
		return nil, nil, err
	}
	return os.NewFile(uintptr(fd), m.Name()), slave, nil
}

// unplug closes both ends: the daemon's next read fails with EIO.
func (p *ptyPlug) unplug() {
	p.stop()
	p.master.Close()
	p.slave.Close()
	<-p.done
}

// feedJ1708 writes a J1587 message with bus-idle gaps, as a transceiver would.
func feedJ1708(ctx context.Context, master *os.File) {
	msg := []byte{0x80, 0x54, 0x00, 0x56, 0x00, 0x5B, 0x07, 0x5C, 0x05, 0xBB, 0x00, 0x00, 0xBE, 0xF7, 0x0A, 0x99}
	for ctx.Err() == nil {
		if _, err := master.Write(msg); err != nil {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// feedSlcan answers the driver as a CANable does and prints a frame every
// 10 ms once the channel is open.
func feedSlcan(ctx context.Context, master *os.File) {
	ad := slcantest.New(master, slcantest.CANable)
	go ad.Serve(ctx)
	select {
	case <-ad.Opened():
	case <-ctx.Done():
		return
	}
	for i := 0; ctx.Err() == nil; i++ {
		if ad.Write([]byte(slcantest.FrameLine(0x18FEF100, true, false, []byte{0xFF, byte(i), 0, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}, -1))) != nil {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestSerialAdaptersUnpluggedMidCaptureAreFoundAgain closes a J1708 pty
// and an slcan pty while both capture, plugs new ones in behind the same
// names, and checks that both ports count again and say they restarted
// and why.
func TestSerialAdaptersUnpluggedMidCaptureAreFoundAgain(t *testing.T) {
	dir := t.TempDir()
	j1708 := &ptyPlug{t: t, link: filepath.Join(dir, "j1708-tty")}
	can := &ptyPlug{t: t, link: filepath.Join(dir, "slcan-tty")}
	j1708.plug(feedJ1708)
	can.plug(feedSlcan)
	t.Cleanup(func() { j1708.unplug(); can.unplug() })

	cfg := filepath.Join(dir, "fieldtapd.toml")
	body := "board = \"none\"\n" +
		"[[port]]\nname = \"bus1\"\ndriver = \"j1708\"\ndevice = \"" + j1708.link + "\"\n" +
		"[[port]]\nname = \"can1\"\ndriver = \"slcan\"\ndevice = \"" + can.link + "\"\n"
	if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*giveUp)
	defer cancel()
	_, url, stderr := startHTTP(t, "--config", cfg)
	s, err := newClient().Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr.String())
	}
	defer s.Close()

	before := byName(waitAllCounting(t, ctx, s, "bus1", "can1"))
	j1708.unplug()
	can.unplug()
	// Both ports must notice: a counted read error and a restart.
	waitPorts(t, ctx, s, func(p portStatus) bool { return p.Restarts > 0 && p.Errors["read"] > 0 }, "bus1", "can1")
	at := byName(captureStatus(t, ctx, s))
	j1708.plug(feedJ1708)
	can.plug(feedSlcan)
	after := waitPorts(t, ctx, s, func(p portStatus) bool { return p.Frames > at[p.Name].Frames }, "bus1", "can1")

	for _, name := range []string{"bus1", "can1"} {
		p := after[name]
		if !p.Live || p.StoppedEarly != "" || p.LastError == "" || p.Frames <= before[name].Frames {
			t.Errorf("%s after the fault: %+v; want a live port counting again, with its restarts and last error", name, p)
		}
		if !strings.Contains(p.LastError, j1708.link) && !strings.Contains(p.LastError, can.link) {
			t.Errorf("%s last error %q does not name the device", name, p.LastError)
		}
	}
	if !strings.Contains(stderr.String(), "port failed; restarting") {
		t.Errorf("the restarts were not logged:\n%s", stderr.String())
	}
}

// waitPorts polls capture_status until ok holds for every named port.
func waitPorts(t *testing.T, ctx context.Context, s *sdk.ClientSession, ok func(portStatus) bool, names ...string) map[string]portStatus {
	t.Helper()
	deadline := time.Now().Add(giveUp)
	for {
		ports := byName(captureStatus(t, ctx, s))
		all := true
		for _, n := range names {
			if !ok(ports[n]) {
				all = false
			}
		}
		if all {
			return ports
		}
		if time.Now().After(deadline) {
			t.Fatalf("ports never reached the state waited for: %+v", ports)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
