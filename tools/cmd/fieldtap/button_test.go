package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fieldtap/board"
)

// TestButtonPress: `fieldtap button press --config` presses the sim
// board's confirm button that a waiting plan watches.
func TestButtonPress(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "confirm")
	cfg := filepath.Join(dir, "fieldtapd.toml")
	if err := os.WriteFile(cfg, []byte("board = \"sim\"\n[transmit]\nconfirm_file = \""+file+"\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	waiting := board.NewFileConfirm(file, nil)
	done := make(chan error, 1)
	go func() { _, err := waiting.AwaitPress(context.Background(), []int{1, 2, 3}, nil); done <- err }()
	// Press until seen: a press before the wait read the file is not one.
	for deadline := time.Now().Add(10 * time.Second); ; {
		var stdout, stderr bytes.Buffer
		if code := run([]string{"button", "press", "--config", cfg}, &stdout, &stderr); code != exitOK || !strings.Contains(stdout.String(), file) {
			t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout.String(), stderr.String())
		}
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			return
		case <-time.After(board.ButtonPoll):
		}
		if time.Now().After(deadline) {
			t.Fatal("the waiting button never saw the press")
		}
	}
}

func TestButtonUsage(t *testing.T) {
	dir := t.TempDir()
	hw := filepath.Join(dir, "hw.toml")
	os.WriteFile(hw, []byte("board = \"qemu-virt\"\n"), 0o644)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{name: "no verb", args: []string{"button"}, want: "usage: fieldtap button"},
		{name: "unknown verb", args: []string{"button", "hold"}, want: "usage: fieldtap button"},
		{name: "nowhere to press", args: []string{"button", "press"}, want: "--file or --config"},
		{name: "a real board", args: []string{"button", "press", "--config", hw}, want: "pressed by hand"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run(tc.args, &stdout, &stderr); code != exitUsage || !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("exit %d, stderr %q; want usage exit mentioning %q", code, stderr.String(), tc.want)
			}
		})
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"button", "press", "--file", filepath.Join(dir, "no", "dir", "confirm")}, &stdout, &stderr); code != exitFail {
		t.Errorf("a press into a missing directory: exit %d", code)
	}
}
