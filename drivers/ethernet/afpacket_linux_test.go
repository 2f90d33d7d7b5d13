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
