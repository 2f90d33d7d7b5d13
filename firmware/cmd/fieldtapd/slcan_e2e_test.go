//go:build linux

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"fieldtap/drivers/slcan/slcantest"
)

// TestConfiguredSlcanPort opens an slcan port from a [[port]] table on one
// end of a pty pair; a simulated CANable on the other end answers the init
// commands and prints J1939 frames, with and without timestamps, and noise.
// capture_status must count every frame and every bad line, and can_frames
// must show the frames with host receive times.
func TestConfiguredSlcanPort(t *testing.T) {
	ad, device := servedCANable(t, nil)

	cfg := filepath.Join(t.TempDir(), "fieldtapd.toml")
	body := "board = \"none\"\n[[port]]\nname = \"can1\"\ndriver = \"slcan\"\ndevice = \"" + device + "\"\nbitrate = 500000\n"
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

	select {
	case <-ad.Opened():
	case <-time.After(giveUp):
		t.Fatalf("adapter never opened; commands %q\n%s", ad.Commands(), stderr.String())
	}
	if ad.Mode() != "listen" || ad.Bitrate() != "S6" {
		t.Fatalf("adapter mode %q bitrate %q, want listen and S6 (500 kbit/s)", ad.Mode(), ad.Bitrate())
	}
	slcanCapturing(t, ctx, s, ad, "can1")
	start := time.Now()
	const frames = 20
	for i := range frames {
		ts := -1
		if i%2 == 1 {
			ts = i * 10
		}
		line := slcantest.FrameLine(0x18FEF100, true, false, []byte{0xFF, byte(i), 0, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}, ts)
		if err := ad.Write([]byte(line)); err != nil {
			t.Fatal(err)
		}
		if i%5 == 0 {
			ad.Write([]byte("t1239000000000000000000\r")) // DLC 9
			ad.Write([]byte("\a"))                        // BELL
		}
		time.Sleep(5 * time.Millisecond)
	}

	deadline := time.Now().Add(giveUp)
	var p portStatus
	for {
		env := captureStatus(t, ctx, s)
		for _, q := range env.Data.Ports {
			if q.Name == "can1" {
				p = q
			}
		}
		if p.Frames >= frames && p.Errors["dlc_over_8"] >= 4 && p.Errors["bell"] >= 4 || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if p.Kind != "can" || !p.Live || !strings.HasPrefix(p.Source, "slcan:") {
		t.Errorf("can1 = %+v, want a live slcan CAN port", p)
	}
	if p.Frames != frames || p.Errors["dlc_over_8"] != 4 || p.Errors["bell"] != 4 {
		t.Fatalf("can1 frames %d errors %v, want %d frames, 4 dlc_over_8, 4 bell", p.Frames, p.Errors, frames)
	}

	res, err := s.CallTool(ctx, &sdk.CallToolParams{Name: "can_frames", Arguments: map[string]any{"port": "can1", "limit": 100}})
	if err != nil || res.IsError {
		t.Fatalf("can_frames: %v %+v", err, res)
	}
	var got struct {
		Items []struct {
			Time     time.Time `json:"time"`
			ID       string    `json:"id"`
			Extended bool      `json:"extended"`
			Data     string    `json:"data"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(res.Content[0].(*sdk.TextContent).Text), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Items) != frames {
		t.Fatalf("can_frames returned %d frames, want %d", len(got.Items), frames)
	}
	for i, f := range got.Items {
		if want := fmt.Sprintf("FF%02X00FFFFFFFFFF", i); !f.Extended || f.ID != "18FEF100" || f.Data != want {
			t.Errorf("frame %d = %+v, want extended 18FEF100 data %s", i, f, want)
		}
		if f.Time.Before(start.Add(-time.Second)) || f.Time.After(time.Now().Add(time.Second)) {
			t.Errorf("frame time %v is not the host receive time (test started %v)", f.Time, start)
		}
	}
}

// servedCANable is a simulated CANable on the master end of a new pty,
// answering until the test ends; setup, when given, prepares it before
// it serves. device is the slave end a [[port]] table names.
func servedCANable(t *testing.T, setup func(*slcantest.Adapter)) (ad *slcantest.Adapter, device string) {
	t.Helper()
	master, slave, err := pty.Open()
	if err != nil {
		t.Skipf("no pty available: %v", err)
	}
	t.Cleanup(func() { master.Close(); slave.Close() })
	ad = slcantest.New(master, slcantest.CANable)
	if setup != nil {
		setup(ad)
	}
	serveCtx, stopServe := context.WithCancel(context.Background())
	t.Cleanup(stopServe)
	go ad.Serve(serveCtx)
	return ad, slave.Name()
}

// slcanCapturing waits until the capture session of the slcan port name
// has opened its adapter. ad.Opened fires at the first L, the start-up
// reset's (ResetListenOnly), which reads past and drops what the adapter
// streams after it, and a frame that comes while the session still
// waits for its own L's acknowledgement is counted before_open: frames a
// test counts go out once the session's L is acknowledged and the port
// captures. On a loaded machine the gap between the two Ls lost frames.
func slcanCapturing(t *testing.T, ctx context.Context, s *sdk.ClientSession, ad *slcantest.Adapter, name string) {
	t.Helper()
	state := func() string {
		for _, q := range captureStatus(t, ctx, s).Data.Ports {
			if q.Name == name {
				return q.State
			}
		}
		return ""
	}
	for deadline := time.Now().Add(giveUp); ; time.Sleep(20 * time.Millisecond) {
		ls := 0
		for _, c := range ad.Commands() {
			if c == "L" {
				ls++
			}
		}
		if ls >= 2 && state() == "capturing" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the capture session of %s never opened: commands %q, state %q", name, ad.Commands(), state())
		}
	}
}
