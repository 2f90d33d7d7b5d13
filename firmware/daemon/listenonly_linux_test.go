//go:build linux

package daemon

import (
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
	for deadline := time.Now().Add(10 * time.Second); ad.Mode() != "normal"; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("adapter never in normal mode: %q", ad.Commands())
		}
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
		t.Errorf("adapter %s after start-up, want listen; commands %q", ad.Mode(), ad.Commands())
	}
	if len(resets) != 2 || resets[0] != (transmit.PortReset{Port: "can1", Driver: "slcan", Mode: transmit.ModeListenOnly}) ||
		resets[1].Port != "can9" || resets[1].Error == "" || resets[1].Mode != "" {
		t.Errorf("resets %+v", resets)
	}
}
