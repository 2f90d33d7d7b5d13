//go:build linux

package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/creack/pty"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestConfiguredJ1708SerialPort opens a J1708 port from a [[port]] table on
// one end of a pty pair and writes messages into the other end, as a bus
// transceiver would.
func TestConfiguredJ1708SerialPort(t *testing.T) {
	master, slave, err := pty.Open()
	if err != nil {
		t.Skipf("no pty available: %v", err)
	}
	defer master.Close()
	defer slave.Close()
	cfg := filepath.Join(t.TempDir(), "fieldtapd.toml")
	body := "board = \"none\"\n[[port]]\nname = \"bus1\"\ndriver = \"j1708\"\ndevice = \"" + slave.Name() + "\"\n"
	if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*giveUp)
	defer cancel()
	_, url, stderr := startHTTP(t, "--config", cfg)
	s, err := newClient().Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr.String())
	}
	defer s.Close()

	// Road speed and engine speed from the school bus log, a message at a
	// time with bus-idle gaps between them.
	msg := []byte{0x80, 0x54, 0x00, 0x56, 0x00, 0x5B, 0x07, 0x5C, 0x05, 0xBB, 0x00, 0x00, 0xBE, 0xF7, 0x0A, 0x99}
	go func() {
		for range 20 {
			if _, err := master.Write(msg); err != nil {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	env := waitAllCounting(t, ctx, s, "bus1")
	for _, p := range env.Data.Ports {
		if p.Name == "bus1" && (p.Kind != "j1708" || !p.Live) {
			t.Errorf("bus1 = %+v, want a live j1708 port", p)
		}
	}
}
