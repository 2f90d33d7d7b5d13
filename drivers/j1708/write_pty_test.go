//go:build linux

package j1708

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/creack/pty"

	"fieldtap/drivers/capture"
	"fieldtap/drivers/capture/capturetest"
	"fieldtap/drivers/j1708/j1708test"
)

// giveUp bounds waiting for the port to open; it is not a timing claim.
const giveUp = 10 * time.Second

// TestWriteOverPty runs the real driver on a pty whose far end echoes
// what the box writes, as a J1708 transceiver does, and corrupts chosen
// echoes as a collision would.
func TestWriteOverPty(t *testing.T) {
	master, slave, err := pty.Open()
	if err != nil {
		t.Skipf("no pty here: %v", err)
	}
	defer master.Close()
	defer slave.Close()
	// A whole echo ends the wait at once, so a long slack costs nothing
	// here and keeps a loaded machine from turning an echo into no_echo.
	src, err := New(Options{Name: "j1708", Device: slave.Name(), EchoSlack: giveUp})
	if err != nil {
		t.Fatal(err)
	}
	var c capture.Counters
	out := capture.NewHandoff(1024, &c)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- src.Run(ctx, out) }()
	go func() {
		for range capturetest.Frames(out) {
		}
	}()
	bus := j1708test.New(master)
	go bus.Serve(ctx)
	for deadline := time.Now().Add(giveUp); src.currentLine() == nil; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the port never opened")
		}
	}

	msg := []byte{0xAC, 0x00, 0xF3, 0x61} // MID 172 requests PID 243 (component id), checksum last
	if err := checkMessage(msg); err != nil {
		t.Fatal(err)
	}
	sentinel := []byte{0xAC, 0x54}

	steps := []struct {
		name      string
		transmit  bool
		collide   int
		send      []byte
		wantErr   error
		wantWire  []byte // bytes this step adds on the bus
		wantCount TxStatus
	}{
		{name: "listen-only writes nothing", send: msg, wantErr: ErrListenOnly},
		{name: "one collision, one retry", transmit: true, collide: 1, send: msg, wantWire: append(append([]byte{}, msg...), msg...),
			wantCount: TxStatus{Transmit: true, Sent: 1, Collisions: 1, Retries: 1}},
		{name: "disarmed again writes nothing", send: msg, wantErr: ErrListenOnly,
			wantCount: TxStatus{Sent: 1, Collisions: 1, Retries: 1}},
		{name: "the next byte on the wire is the sentinel", transmit: true, send: sentinel, wantWire: sentinel,
			wantCount: TxStatus{Transmit: true, Sent: 2, Collisions: 1, Retries: 1}},
		{name: "gives up after MaxAttempts", transmit: true, collide: MaxAttempts, send: msg, wantErr: ErrCollisions,
			wantWire:  bytes.Repeat(msg, MaxAttempts),
			wantCount: TxStatus{Transmit: true, Sent: 2, Collisions: 1 + MaxAttempts, Retries: MaxAttempts, GaveUp: 1}},
	}
	var wire []byte
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			if err := src.SetTransmit(st.transmit); err != nil {
				t.Fatal(err)
			}
			bus.CollideNext(st.collide)
			err := src.WriteFrame(ctx, 0, st.send)
			if !errors.Is(err, st.wantErr) {
				t.Fatalf("WriteFrame = %v, want %v", err, st.wantErr)
			}
			wire = append(wire, st.wantWire...)
			if got := bus.Received(); !bytes.Equal(got, wire) {
				t.Errorf("on the wire % X\nwant        % X", got, wire)
			}
			if got := src.TxStatus(); got != st.wantCount {
				t.Errorf("tx status %+v, want %+v", got, st.wantCount)
			}
		})
	}
	if n := src.Stats().Errors[ReasonTxCollision]; n != 1+MaxAttempts {
		t.Errorf("Stats tx_collision = %d, want %d", n, 1+MaxAttempts)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run = %v", err)
	}
	if src.currentLine() != nil {
		t.Error("the line is still published after Run ended")
	}
}
