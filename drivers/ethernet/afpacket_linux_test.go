//go:build linux

package ethernet

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"fieldtap/drivers/capture"
	"fieldtap/drivers/capture/capturetest"
)

// testNetns creates a network namespace with lo up, removed at cleanup.
// Traffic in it never leaves it. It skips unless root can run ip netns.
func testNetns(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root for a network namespace and AF_PACKET")
	}
	name := fmt.Sprintf("ftap-eth-%d", os.Getpid())
	if out, err := exec.Command("ip", "netns", "add", name).CombinedOutput(); err != nil {
		t.Skipf("ip netns add does not work here: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("ip", "netns", "del", name).Run() })
	if out, err := exec.Command("ip", "netns", "exec", name, "ip", "link", "set", "lo", "up").CombinedOutput(); err != nil {
		t.Fatalf("lo up: %v %s", err, out)
	}
	return name
}

// inNetns runs fn on an OS thread moved into ns. The thread is locked and
// never unlocked, so the runtime retires it when the goroutine ends and
// no other goroutine ever runs in the namespace. Sockets fn creates stay
// in ns.
func inNetns(ns string, fn func()) error {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		f, err := os.Open("/var/run/netns/" + ns)
		if err != nil {
			done <- err
			return
		}
		defer f.Close()
		if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
			done <- err
			return
		}
		fn()
		done <- nil
	}()
	return <-done
}

// sinkAndDial binds a UDP sink that never reads (so no ICMP refusal
// interrupts the sender) and dials it.
func sinkAndDial(port string) (sink net.PacketConn, conn net.Conn, err error) {
	if sink, err = net.ListenPacket("udp", "127.0.0.1:"+port); err != nil {
		return nil, nil, err
	}
	if conn, err = net.Dial("udp", sink.LocalAddr().String()); err != nil {
		sink.Close()
		return nil, nil, err
	}
	return sink, conn, nil
}

// TestKernelDropsCounted fills a ring nobody reads and checks
// the loss shows as kernel drops and a queue freeze, and that a second
// socket (the supervisor's restart) adds to them instead of starting the
// shown counts again at zero.
func TestKernelDropsCounted(t *testing.T) {
	ns := testNetns(t)
	s, err := New(Options{Name: "t", Device: "lo", BlockSize: pageSize, NumBlocks: maxInflightBlocks + 1})
	if err != nil {
		t.Fatal(err)
	}
	var first capture.Stats
	err = inNetns(ns, func() {
		tp, err := s.open()
		if err != nil {
			t.Error(err)
			return
		}
		sink, conn, err := sinkAndDial("5060")
		if err != nil {
			t.Error(err)
			return
		}
		defer sink.Close()
		defer conn.Close()
		b := make([]byte, 1000)
		for range 200 {
			conn.Write(b)
		}
		s.closeRing(tp)
		first = s.Stats()
		tp, err = s.open()
		if err != nil {
			t.Error(err)
			return
		}
		for range 200 {
			conn.Write(b)
		}
		s.closeRing(tp)
	})
	if err != nil {
		t.Fatal(err)
	}
	if first.Drops[capture.DropKernel] == 0 || first.Drops[DropKernelFreeze] == 0 {
		t.Errorf("drops = %v, want kernel drops and a freeze after flooding a %d KiB ring", first.Drops, pageSize*(maxInflightBlocks+1)>>10)
	}
	if st := s.Stats(); st.Drops[capture.DropKernel] <= first.Drops[capture.DropKernel] || st.Drops[DropKernelFreeze] <= first.Drops[DropKernelFreeze] {
		t.Errorf("drops after a second socket %v, after the first %v: want the second's added", st.Drops, first.Drops)
	}
}

// TestRunDeliversCopies captures lo while datagrams flow and checks each
// frame arrives whole, owned by the Frame.
func TestRunDeliversCopies(t *testing.T) {
	ns := testNetns(t)
	s, err := New(Options{Name: "t", Device: "lo", Filter: sipFilterText(t, false)})
	if err != nil {
		t.Fatal(err)
	}
	var c capture.Counters
	h := capture.NewHandoff(64, &c)
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() {
		if err := inNetns(ns, func() { ran <- s.Run(ctx, h) }); err != nil {
			ran <- err
		}
	}()
	var sink, otherSink net.PacketConn
	var conn, other net.Conn
	var dialErr error
	if err := inNetns(ns, func() {
		sink, conn, dialErr = sinkAndDial("5060")
		if dialErr == nil {
			otherSink, other, dialErr = sinkAndDial("5999") // the filter drops it
		}
	}); err != nil || dialErr != nil {
		t.Fatal(err, dialErr)
	}
	defer sink.Close()
	defer otherSink.Close()
	defer conn.Close()
	defer other.Close()
	var got []capture.Frame
	frames := capturetest.Frames(h)
	sent := map[string]bool{}
	deadline := time.After(10 * time.Second)
	for i := 0; len(got) < 6; i++ {
		msg := fmt.Sprintf("OPTIONS sip:x SIP/2.0 #%d", i)
		sent[msg] = true
		conn.Write([]byte(msg))
		other.Write([]byte("not captured"))
		select {
		case f := <-frames:
			got = append(got, f)
		case <-time.After(100 * time.Millisecond):
		case <-deadline:
			t.Fatalf("only %d frames captured", len(got))
		}
	}
	cancel()
	if err := <-ran; err != nil {
		t.Fatalf("Run = %v", err)
	}
	// lo shows each datagram twice (out and in), so 6 frames hold at
	// least 3 messages; a reused buffer would make them all the last one.
	const udpPayload = 14 + 20 + 8
	for i, f := range got {
		if len(f.Data) < udpPayload || f.Time.IsZero() || f.OrigLen != len(f.Data) || !sent[string(f.Data[udpPayload:])] {
			t.Errorf("frame %d: %d bytes, time %v, orig %d: % x", i, len(f.Data), f.Time, f.OrigLen, f.Data)
		}
	}
	if first, last := string(got[0].Data[udpPayload:]), string(got[len(got)-1].Data[udpPayload:]); first == last {
		t.Errorf("first and last frames both hold %q: frames share a buffer", first)
	}
}

// TestEveryFrameCapturedOrCounted floods a small ring while a slow
// consumer holds each block's batch: every frame the kernel saw is either
// captured intact (its data borrows the ring, so a block given back too
// early would show another frame's bytes) or counted as a kernel drop.
func TestEveryFrameCapturedOrCounted(t *testing.T) {
	ns := testNetns(t)
	s, err := New(Options{Name: "t", Device: "lo", Filter: sipFilterText(t, false), BlockSize: 4 * pageSize, NumBlocks: 8, BlockTimeout: 2 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	var c capture.Counters
	h := capture.NewHandoff(capture.DefaultHandoffDepth, &c)
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() {
		if err := inNetns(ns, func() { ran <- s.Run(ctx, h) }); err != nil {
			ran <- err
		}
	}()
	const udpPayload = 14 + 20 + 8
	// got is read while the consumer counts; batches and bad once it ended.
	var got atomic.Uint64
	batches := 0
	bad := ""
	consumed := make(chan struct{})
	go func() {
		defer close(consumed)
		for {
			b, ok := h.Receive()
			if !ok {
				return
			}
			batches++
			for _, f := range b.Frames {
				p := f.Data[min(udpPayload, len(f.Data)):]
				if !bytes.HasPrefix(p, []byte("OPTIONS sip:x SIP/2.0 #")) || len(p) != 63 {
					bad = fmt.Sprintf("%q", p)
				}
				got.Add(1)
			}
			time.Sleep(time.Millisecond) // hold the block a while
			h.Release(b)
		}
	}()
	var sink net.PacketConn
	var conn net.Conn
	var dialErr error
	// The socket is bound once the kernel counters appear (open sets them).
	for open := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if _, ok := s.Stats().Drops[capture.DropKernel]; ok {
			break
		}
		if time.Now().After(open) {
			t.Fatal("the capture never opened")
		}
	}
	const sent = 3000
	if err := inNetns(ns, func() {
		if sink, conn, dialErr = sinkAndDial("5060"); dialErr != nil {
			return
		}
		defer sink.Close()
		defer conn.Close()
		for i := range sent {
			conn.Write([]byte(fmt.Sprintf("OPTIONS sip:x SIP/2.0 #%040d", i)))
		}
	}); err != nil || dialErr != nil {
		t.Fatal(err, dialErr)
	}
	// lo shows each datagram twice (out and in). Wait for the last
	// blocks to retire and be read, then stop.
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if got.Load()+s.Stats().Drops[capture.DropKernel] >= 2*sent {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	if err := <-ran; err != nil {
		t.Fatalf("Run = %v", err)
	}
	h.Close()
	<-consumed
	drops := s.Stats().Drops[capture.DropKernel]
	if bad != "" {
		t.Errorf("a frame showed %s: its block was reused while the consumer held it", bad)
	}
	captured := got.Load()
	if captured+drops != 2*sent {
		t.Errorf("kernel saw %d frames; captured %d + kernel drops %d = %d", 2*sent, captured, drops, captured+drops)
	}
	if uint64(batches) >= captured {
		t.Errorf("%d frames came in %d batches: want whole blocks per batch", captured, batches)
	}
	t.Logf("%d frames: %d captured in %d batches, %d kernel drops", 2*sent, captured, batches, drops)
}

// rawSender writes Ethernet frames out of interface dev of the calling
// thread's namespace.
type rawSender struct{ fd, ifindex int }

func newRawSender(dev string) (*rawSender, error) {
	ifi, err := net.InterfaceByName(dev)
	if err != nil {
		return nil, err
	}
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	return &rawSender{fd: fd, ifindex: ifi.Index}, nil
}

// send writes one broadcast frame of an experimental EtherType carrying n.
func (r *rawSender) send(n int) error {
	f := append(bytes.Repeat([]byte{0xff}, 6), 2, 0, 0, 0, 0, 1, 0x88, 0xb5)
	f = append(f, fmt.Sprintf("frame %06d ......................................", n)...)
	return unix.Sendto(r.fd, f, 0, &unix.SockaddrLinklayer{Ifindex: r.ifindex})
}

func (r *rawSender) close() { unix.Close(r.fd) }

// TestLinkDownUnderAnOpenSocket sets the captured interface down and up
// again: the socket error the kernel leaves is read and counted as
// link_down, Probe says down meanwhile, and the same attempt captures
// again once the link is up (the kernel hooks the socket in again).
// Then the interface is deleted and made again: Probe says gone for the
// socket bound to the old index, and up for a new one.
func TestLinkDownUnderAnOpenSocket(t *testing.T) {
	ns := testNetns(t)
	const dev, peer = "ftld0", "ftld1"
	ipns := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("ip", append([]string{"-n", ns}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("ip %v: %v %s", args, err, out)
		}
	}
	veth := func() {
		ipns("link", "add", dev, "type", "veth", "peer", "name", peer)
		ipns("link", "set", dev, "up")
		ipns("link", "set", peer, "up")
	}
	veth()
	s, err := New(Options{Name: "t", Device: dev})
	if err != nil {
		t.Fatal(err)
	}
	probe := func() (m capture.Medium) {
		if err := inNetns(ns, func() { m = s.Probe() }); err != nil {
			t.Fatal(err)
		}
		return m
	}
	var c capture.Counters
	h := capture.NewHandoff(64, &c)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ran := make(chan error, 1)
	go func() {
		if err := inNetns(ns, func() { ran <- s.Run(ctx, h) }); err != nil {
			ran <- err
		}
	}()
	// Every frame is counted here, so the batches are always released
	// (the attempt gives its ring back only when they are).
	var captured atomic.Int64
	go func() {
		for range capturetest.Frames(h) {
			captured.Add(1)
		}
	}()
	var tx *rawSender
	var txErr error
	if err := inNetns(ns, func() { tx, txErr = newRawSender(peer) }); err != nil || txErr != nil {
		t.Fatal(err, txErr)
	}
	defer tx.close()
	// received sends until a frame arrives, failing if Run ends first.
	received := func(step string) {
		t.Helper()
		before := captured.Load()
		deadline := time.After(10 * time.Second)
		for i := 0; captured.Load() == before; i++ {
			tx.send(i)
			select {
			case err := <-ran:
				t.Fatalf("%s: Run ended: %v", step, err)
			case <-time.After(20 * time.Millisecond):
			case <-deadline:
				t.Fatalf("%s: no frame captured", step)
			}
		}
	}
	received("up")
	if m := probe(); m != capture.MediumUp || s.Stats().OpenSince.IsZero() {
		t.Fatalf("open on a link that is up: probe %q, open since %v", m, s.Stats().OpenSince)
	}

	ipns("link", "set", dev, "down")
	for deadline := time.Now().Add(10 * time.Second); s.Stats().Errors[ReasonLinkDown] == 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the link went down and nothing was counted: %v", s.Stats().Errors)
		}
	}
	if m := probe(); m != capture.MediumDown {
		t.Errorf("link down: probe %q, want down", m)
	}
	ipns("link", "set", dev, "up")
	received("up again, same attempt")
	if st := s.Stats(); st.Errors[ReasonLinkDown] != 1 || st.Errors["read"] != 0 {
		t.Errorf("errors %v: want one link_down and no failed read", st.Errors)
	}

	// The kernel reports the interface's end once on the socket, at times
	// while it still lists the interface: the attempt ends with the
	// interface gone, or goes on and Probe says gone for it (the
	// daemon's watchdog then ends it).
	ipns("link", "del", dev)
	ended := false
	for deadline := time.Now().Add(10 * time.Second); !ended; time.Sleep(5 * time.Millisecond) {
		select {
		case err := <-ran:
			if err == nil || !strings.Contains(err.Error(), "interface gone") {
				t.Errorf("Run after the interface was deleted = %v, want it gone", err)
			}
			ended = true
			continue
		default:
		}
		if !s.Stats().OpenSince.IsZero() && probe() == capture.MediumGone {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("deleted: Run goes on and probe says %q", probe())
		}
	}
	if !ended {
		veth()
		if m := probe(); m != capture.MediumGone {
			t.Errorf("made again with a new index, the old socket still open: probe %q, want gone", m)
		}
		cancel()
		if err := <-ran; err != nil {
			t.Errorf("Run after cancel = %v", err)
		}
	} else {
		veth()
	}
	if !s.Stats().OpenSince.IsZero() {
		t.Errorf("open since %v after Run returned", s.Stats().OpenSince)
	}
	// The kernel raises a new link's carrier a moment after it is set up.
	for deadline := time.Now().Add(10 * time.Second); probe() != capture.MediumUp; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no socket open, the new interface up: probe %q, want up", probe())
		}
	}
	t.Logf("the deletion ended the attempt by itself: %v", ended)
}

// TestRaiseThreadRestores: the reader's thread is raised to readerNice
// where permitted, and the old nice value comes back before the thread
// returns to the runtime's pool.
func TestRaiseThreadRestores(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	tid := unix.Gettid()
	before, err := unix.Getpriority(unix.PRIO_PROCESS, tid)
	if err != nil {
		t.Fatal(err)
	}
	restore := raiseThread()
	now, _ := unix.Getpriority(unix.PRIO_PROCESS, tid)
	if os.Geteuid() == 0 && 20-now != readerNice {
		t.Errorf("as root the reader's nice is %d, want %d", 20-now, readerNice)
	}
	restore()
	if after, _ := unix.Getpriority(unix.PRIO_PROCESS, tid); after != before {
		t.Errorf("nice %d after restore, want %d back", 20-after, 20-before)
	}
}
