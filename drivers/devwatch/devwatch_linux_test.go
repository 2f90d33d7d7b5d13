//go:build linux

package devwatch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"fieldtap/drivers/capture"
)

func TestInterfaceLoopback(t *testing.T) {
	l, err := Interface("lo")
	if err != nil || l.Index <= 0 || !l.Up {
		t.Errorf("lo = %+v, %v: want an index and up", l, err)
	}
}

func TestInterfaceMissing(t *testing.T) {
	if _, err := Interface("ftnosuch0"); !errors.Is(err, ErrNoDevice) {
		t.Errorf("a missing interface: %v, want ErrNoDevice", err)
	}
	if m := InterfaceMedium("ftnosuch0", 0); m != capture.MediumGone {
		t.Errorf("medium of a missing interface: %q, want gone", m)
	}
	if _, err := Interface("a-name-longer-than-ifnamsiz"); err == nil || errors.Is(err, ErrNoDevice) {
		t.Errorf("a name no interface can have: %v, want an error that is not ErrNoDevice", err)
	}
}

func TestNodeMedium(t *testing.T) {
	null, err := Node("/dev/null")
	if err != nil || null == 0 {
		t.Fatalf("/dev/null: %d, %v", null, err)
	}
	link := filepath.Join(t.TempDir(), "ttyUSB-by-id")
	relink := func(to string) {
		os.Remove(link)
		if err := os.Symlink(to, link); err != nil {
			t.Fatal(err)
		}
	}
	relink("/dev/null")
	cases := []struct {
		name   string
		to     string // where the link points; "" removes it
		opened uint64
		want   capture.Medium
	}{
		{name: "the node opened", to: "/dev/null", opened: null, want: capture.MediumUp},
		{name: "another device behind the same name", to: "/dev/zero", opened: null, want: capture.MediumGone},
		{name: "another device, nothing opened", to: "/dev/zero", opened: 0, want: capture.MediumUp},
		{name: "the link points nowhere", to: "/dev/ftnosuch", opened: null, want: capture.MediumGone},
		{name: "no link", to: "", opened: 0, want: capture.MediumGone},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.to == "" {
				os.Remove(link)
			} else {
				relink(tc.to)
			}
			if got := NodeMedium(link, tc.opened); got != tc.want {
				t.Errorf("NodeMedium = %q, want %q", got, tc.want)
			}
		})
	}
}

// netns makes a network namespace for the test, removed at cleanup; it
// skips unless root can.
func netns(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: a network namespace and a veth pair")
	}
	ns := fmt.Sprintf("ftdw-%d", os.Getpid())
	if out, err := exec.Command("ip", "netns", "add", ns).CombinedOutput(); err != nil {
		t.Skipf("ip netns does not work here: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("ip", "netns", "del", ns).Run() })
	return ns
}

func ip(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		t.Fatalf("ip %s: %v %s", strings.Join(args, " "), err, out)
	}
}

// inNetns runs f on an OS thread in namespace ns; the thread is never
// given back to the runtime, so it dies with f's goroutine.
func inNetns(t *testing.T, ns string, f func()) {
	t.Helper()
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		fd, err := os.Open("/var/run/netns/" + ns)
		if err != nil {
			errc <- err
			return
		}
		err = unix.Setns(int(fd.Fd()), unix.CLONE_NEWNET)
		fd.Close()
		errc <- err
		if err == nil {
			f()
		}
	}()
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
}

// TestAVethLifeAsProbedAndAnnounced follows one interface through a
// USB NIC's life (plugged in down, set up without and with a carrier,
// unplugged, plugged in again with a new index) as InterfaceMedium sees
// it for a socket bound to the first index, and checks each change is
// announced by WatchLinks.
func TestAVethLifeAsProbedAndAnnounced(t *testing.T) {
	ns := netns(t)
	const dev, peer = "ftdw0", "ftdw1"
	events := make(chan struct{}, 64)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	watching := make(chan error, 1)
	inNetns(t, ns, func() {
		watching <- WatchLinks(ctx, func() {
			select {
			case events <- struct{}{}:
			default:
			}
		})
	})
	probe := func(bound int) (m capture.Medium, idx int) {
		done := make(chan struct{})
		inNetns(t, ns, func() {
			defer close(done)
			m = InterfaceMedium(dev, bound)
			if l, err := Interface(dev); err == nil {
				idx = l.Index
			}
		})
		<-done
		return m, idx
	}
	announced := func(step string) {
		t.Helper()
		select {
		case <-events:
		case err := <-watching:
			t.Fatalf("%s: WatchLinks ended: %v", step, err)
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: no link event", step)
		}
		for len(events) > 0 {
			<-events
		}
	}

	// expect waits for the medium to read want for a socket bound to
	// bound: the kernel raises a carrier a moment after the link is up.
	expect := func(step string, bound int, want capture.Medium) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
			m, _ := probe(bound)
			if m == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: %q, want %q", step, m, want)
			}
		}
	}
	ip(t, "-n", ns, "link", "add", dev, "type", "veth", "peer", "name", peer)
	announced("plugged in")
	m, first := probe(0)
	if m != capture.MediumDown || first == 0 {
		t.Fatalf("a new interface, not set up: %q index %d, want down", m, first)
	}
	ip(t, "-n", ns, "link", "set", dev, "up")
	announced("set up")
	if m, _ := probe(first); m != capture.MediumDown {
		t.Errorf("set up, its peer down (no carrier): %q, want down", m)
	}
	ip(t, "-n", ns, "link", "set", peer, "up")
	announced("carrier")
	expect("set up with a carrier", first, capture.MediumUp)
	ip(t, "-n", ns, "link", "del", dev)
	announced("unplugged")
	expect("deleted", first, capture.MediumGone)
	ip(t, "-n", ns, "link", "add", dev, "type", "veth", "peer", "name", peer)
	ip(t, "-n", ns, "link", "set", dev, "up")
	ip(t, "-n", ns, "link", "set", peer, "up")
	announced("plugged in again")
	if _, again := probe(0); again == first {
		t.Errorf("back with the index it had (%d): want a new one", again)
	}
	expect("back, for the old socket", first, capture.MediumGone)
	expect("back, for a new socket", 0, capture.MediumUp)
	cancel()
	select {
	case err := <-watching:
		if err != nil {
			t.Errorf("WatchLinks after cancel: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Error("WatchLinks did not return after its context ended")
	}
}
