//go:build linux

package j1708

import (
	"bytes"
	"context"
	"encoding/hex"
	"os"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"

	"fieldtap/drivers/capture"
	"fieldtap/drivers/capture/capturetest"
	"fieldtap/drivers/wire"
)

// wireEvent is one burst the simulator puts on the line after idle.
type wireEvent struct {
	data []byte
	msgs [][]byte // the messages the driver must frame from it
}

// simScenario is a bus with every fault the framer must survive:
// realistic messages with idle between them, glued pairs (a missed gap),
// lone noise bytes, noise glued before a message, and garbled messages.
func simScenario(t *testing.T) (events []wireEvent, want FramerStats) {
	pool := [][]byte{
		unhex(t, "80540056005B075C05BB0000BEF70A99"),
		unhex(t, "80020028FF55007900B72600B80000F4"),
		unhex(t, "80460047005300590047"),
		unhex(t, "80C200BE"),
		unhex(t, "8880548024"),
		unhex(t, "80F587D612001C"),
	}
	// A message with a zero-sum proper prefix is two valid messages to
	// the checksum resync (80F50487 D6120018), so how the kernel splits a
	// write would decide the answer. None here has one.
	for _, m := range pool {
		for cut := wire.MinJ1708Message; cut <= len(m)-wire.MinJ1708Message; cut++ {
			if Checksum(m[:cut]) {
				t.Fatalf("fixture %X splits into two valid messages at %d", m, cut)
			}
		}
	}
	for i := range 40 {
		m := pool[i%len(pool)]
		events = append(events, wireEvent{data: m, msgs: [][]byte{m}})
	}
	want.Messages, want.Runs = 40, 40
	for i := range 4 {
		a, b := pool[i%2], pool[2]
		if len(a)+len(b) <= wire.MaxJ1708Message {
			t.Fatal("a glued pair must exceed wire.MaxJ1708Message to be told apart")
		}
		events = append(events, wireEvent{data: append(append([]byte{}, a...), b...), msgs: [][]byte{a, b}})
	}
	want.Messages += 8
	want.Runs += 4
	want.Resyncs += 4
	for _, n := range []byte{0x00, 0x55, 0xFF, 0x13} {
		events = append(events, wireEvent{data: []byte{n}})
	}
	want.Runs += 4
	want.Noise += 4
	want.Discarded += 4
	for i := range 3 {
		m := pool[i]
		events = append(events, wireEvent{data: append([]byte{0x7E}, m...), msgs: [][]byte{m}})
	}
	want.Messages += 3
	want.Runs += 3
	want.Resyncs += 3
	want.Noise += 3
	want.Discarded += 3
	for i := range 3 {
		g := append([]byte{}, pool[i]...)
		g[len(g)/2] ^= 0x21
		events = append(events, wireEvent{data: g})
		want.Discarded += uint64(len(g))
	}
	want.Runs += 3
	want.ChecksumFailures += 3
	// Interleave so faults sit between good traffic.
	out := make([]wireEvent, 0, len(events))
	good, bad := events[:40], events[40:]
	for i, e := range good {
		out = append(out, e)
		if i%3 == 2 && len(bad) > 0 {
			out, bad = append(out, bad[0]), bad[1:]
		}
	}
	return append(out, bad...), want
}

// TestSerialOverPty runs the real driver (go.bug.st/serial) on a pty whose
// other end a simulator drives with wire timing: each burst arrives after
// idle plus its own transmission time at 9600 baud, as a UART delivers it.
// The simulator writes the next burst only once the driver has framed the
// previous one, so a loaded machine that delays the reader cannot glue
// two bursts into one read: the answer does not depend on scheduling.
func TestSerialOverPty(t *testing.T) {
	master, slave, err := pty.Open()
	if err != nil {
		t.Skipf("no pty here: %v", err)
	}
	defer master.Close()
	defer slave.Close()
	// Raw before the driver opens it: a burst written first must not meet
	// the line discipline's canonical mode (0x04 is VEOF there).
	if err := makeRaw(slave); err != nil {
		t.Fatal(err)
	}

	src, err := New(Options{Name: "j1708", Device: slave.Name()})
	if err != nil {
		t.Fatal(err)
	}
	var c capture.Counters
	out := capture.NewHandoff(1024, &c)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- src.Run(ctx, out) }()
	var got [][]byte
	collected := make(chan struct{})
	go func() {
		for f := range capturetest.Frames(out) {
			got = append(got, f.Data)
		}
		close(collected)
	}()
	events, want := simScenario(t)
	const idle = 5 * time.Millisecond // ≫ the 1 ms gap
	var wantMsgs [][]byte
	for i, e := range events {
		time.Sleep(idle + time.Duration(len(e.data))*byteTime9600)
		if _, err := master.Write(e.data); err != nil {
			t.Fatal(err)
		}
		wantMsgs = append(wantMsgs, e.msgs...)
		awaitRuns(t, src, uint64(i+1))
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run = %v", err)
	}
	out.Close()
	<-collected

	if len(got) != len(wantMsgs) {
		for i := range max(len(got), len(wantMsgs)) {
			var g, w []byte
			if i < len(got) {
				g = got[i]
			}
			if i < len(wantMsgs) {
				w = wantMsgs[i]
			}
			t.Logf("%3d got %x want %x", i, g, w)
		}
		t.Fatalf("framed %d messages, want %d; stats %+v", len(got), len(wantMsgs), src.FramerStats())
	}
	for i := range got {
		if !bytes.Equal(got[i], wantMsgs[i]) {
			t.Errorf("message %d = %s, want %s", i, hex.EncodeToString(got[i]), hex.EncodeToString(wantMsgs[i]))
		}
	}
	if fs := src.FramerStats(); fs != want {
		t.Errorf("framer stats = %+v\nwant           %+v", fs, want)
	}
	st := src.Stats()
	if st.Errors[ErrReasonChecksum] != want.ChecksumFailures || st.Errors[ErrReasonNoise] != want.Noise {
		t.Errorf("port errors = %v", st.Errors)
	}
}

// awaitRuns waits until the driver has framed n runs; giveUp bounds a
// driver that never does, it is not a timing claim.
func awaitRuns(t *testing.T, src *Source, n uint64) {
	t.Helper()
	for deadline := time.Now().Add(giveUp); src.FramerStats().Runs < n; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the driver framed %d runs, want %d; stats %+v", src.FramerStats().Runs, n, src.FramerStats())
		}
	}
}

// makeRaw puts a tty in raw mode, as cfmakeraw(3) does.
func makeRaw(f *os.File) error {
	fd := int(f.Fd())
	tio, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return err
	}
	tio.Iflag &^= unix.IGNBRK | unix.BRKINT | unix.PARMRK | unix.ISTRIP | unix.INLCR | unix.IGNCR | unix.ICRNL | unix.IXON
	tio.Oflag &^= unix.OPOST
	tio.Lflag &^= unix.ECHO | unix.ECHONL | unix.ICANON | unix.ISIG | unix.IEXTEN
	tio.Cflag &^= unix.CSIZE | unix.PARENB
	tio.Cflag |= unix.CS8
	return unix.IoctlSetTermios(fd, unix.TCSETS, tio)
}

func TestOptionsChecked(t *testing.T) {
	tests := []struct {
		name string
		o    Options
		ok   bool
	}{
		{name: "defaults", o: Options{Device: "/dev/ttyS1"}, ok: true},
		{name: "no device", o: Options{}},
		{name: "gap too small", o: Options{Device: "x", Gap: time.Microsecond}},
		{name: "bad baud", o: Options{Device: "x", Baud: 12}},
		{name: "poll below gap", o: Options{Device: "x", Gap: 5 * time.Millisecond, IdlePoll: time.Millisecond}},
		{name: "echo slack negative", o: Options{Device: "x", EchoSlack: -time.Millisecond}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := New(tc.o)
			if (err == nil) != tc.ok {
				t.Fatalf("err = %v, want ok=%v", err, tc.ok)
			}
			if tc.ok && (s.opts.Gap != DefaultGap || s.opts.Baud != DefaultBaud) {
				t.Errorf("defaults not applied: %+v", s.opts)
			}
		})
	}
}
