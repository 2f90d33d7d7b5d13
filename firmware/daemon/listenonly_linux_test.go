//go:build linux

package daemon

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/creack/pty"
	"go.bug.st/serial"

	"fieldtap/board"
	"fieldtap/drivers/slcan/slcantest"
	"fieldtap/firmware/config"
	"fieldtap/services/transmit"
)

// TestListenOnlyFirst: every configured CAN port is put back in
// listen-only before the daemon does anything else; an slcan adapter a
// killed run left in normal mode is listening again, a socketcan port that
// is not there is reported, not fatal, and J1708 (no controller mode) is
// left alone.
func TestListenOnlyFirst(t *testing.T) {
	master, slave, err := pty.Open()
	if err != nil {
		t.Skipf("no pty here: %v", err)
	}
	defer master.Close()
	defer slave.Close()
	ad := slcantest.New(master, slcantest.CANable)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go ad.Serve(ctx)
	killed, err := serial.Open(slave.Name(), &serial.Mode{BaudRate: 115200})
	if err != nil {
		t.Fatal(err)
	}
	killed.Write([]byte("C\rS5\rO\r")) // the killed run's plan had opened it normal
	readAcks(t, killed, 3)
	if ad.Mode() != "normal" {
		t.Fatalf("adapter %s, want normal: %q", ad.Mode(), ad.Commands())
	}
	killed.Close()

	cfg := config.Default()
	cfg.Board = "none"
	cfg.Ports = []board.Port{
		{Name: "can1", Driver: "slcan", Device: slave.Name(), Bitrate: 250_000, Transmit: true},
		{Name: "can9", Driver: "socketcan", Device: "fieldtapnone9"},
		{Name: "j1708", Driver: "j1708", Device: "/dev/null"},
	}
	resets := listenOnlyFirst(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if ad.Mode() != "listen" {
		t.Errorf("adapter %s after start-up, want listen; commands %q; resets %+v", ad.Mode(), ad.Commands(), resets)
	}
	if len(resets) != 2 || resets[0] != (transmit.PortReset{Port: "can1", Driver: "slcan", Mode: transmit.ModeListenOnly}) ||
		resets[1].Port != "can9" || resets[1].Error == "" || resets[1].Mode != "" {
		t.Errorf("resets %+v", resets)
	}
}

// readAcks reads from p until n replies (CR or BELL) came back (the killed run read the
// replies to its commands), bounded.
func readAcks(t *testing.T, p serial.Port, n int) {
	t.Helper()
	p.SetReadTimeout(100 * time.Millisecond)
	buf := make([]byte, 64)
	for deadline := time.Now().Add(10 * time.Second); n > 0; {
		k, _ := p.Read(buf)
		n -= bytes.Count(buf[:k], []byte{'\r'}) + bytes.Count(buf[:k], []byte{'\a'}) // an ack or a BELL each
		if time.Now().After(deadline) {
			t.Fatalf("%d acks never came", n)
		}
	}
}
