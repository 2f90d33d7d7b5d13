//go:build linux

package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestButtonPressesMarkOnTheSimBoard runs the real fieldtapd on the sim
// board with a confirm file and the recorder on, and presses with the
// real `fieldtap button press` while no plan waits: what_happened shows
// the press as a mark, the mark tool adds one with its label, and the
// recorder's marks.json beside the segments holds both. (The emulated
// board's QMP-pulsed button is not part of this test: it is the host
// version of that check, over the sim board's press file.)
func TestButtonPressesMarkOnTheSimBoard(t *testing.T) {
	dir := t.TempDir()
	cli := filepath.Join(dir, "fieldtap")
	build := exec.Command("go", "build", "-o", cli, "fieldtap/tools/cmd/fieldtap")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build fieldtap: %v\n%s", err, out)
	}
	confirm, recDir := filepath.Join(dir, "confirm"), filepath.Join(dir, "rec")
	cfg := filepath.Join(dir, "fieldtapd.toml")
	os.WriteFile(cfg, []byte(`board = "sim"
[transmit]
confirm_file = "`+confirm+`"
[recorder]
enabled = true
dir = "`+recDir+`"
`), 0o644)
	ctx, cancel := context.WithTimeout(context.Background(), 3*giveUp)
	defer cancel()
	s, stderr, _ := connectConfirming(t, ctx, cfg, "server,timeline")
	defer s.Close()

	type row struct {
		Kind   string `json:"kind"`
		Text   string `json:"text"`
		Detail struct {
			Tool string `json:"tool"`
		} `json:"detail"`
	}
	marksNow := func() []row {
		r, err := s.CallTool(ctx, &sdk.CallToolParams{Name: "what_happened", Arguments: map[string]any{
			"at": time.Now().UTC().Format(time.RFC3339Nano), "window": "-10m+1m", "kinds": []any{"mark"}}})
		if err != nil {
			t.Fatal(err)
		}
		var env struct {
			OK    bool  `json:"ok"`
			Items []row `json:"items"`
		}
		if err := json.Unmarshal([]byte(r.Content[0].(*sdk.TextContent).Text), &env); err != nil || !env.OK {
			t.Fatalf("what_happened: %v %s", err, r.Content[0].(*sdk.TextContent).Text)
		}
		return env.Items
	}
	// Press until the daemon's idle watcher has seen one: a press before
	// its wait read the file is (rightly) nobody's.
	for deadline := time.Now().Add(giveUp); len(marksNow()) == 0; time.Sleep(300 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no press became a mark\n%s", stderr.String())
		}
		if b, err := exec.Command(cli, "button", "press", "--config", cfg).CombinedOutput(); err != nil {
			t.Fatalf("fieldtap button press: %v\n%s", err, b)
		}
	}
	rows := marksNow()
	if !strings.Contains(rows[0].Text, "button") || rows[0].Detail.Tool != "what_happened" {
		t.Errorf("the press's row %+v", rows[0])
	}
	r, err := s.CallTool(ctx, &sdk.CallToolParams{Name: "mark", Arguments: map[string]any{"label": "horn pressed"}})
	if err != nil || r.IsError {
		t.Fatalf("mark: %v %+v", err, r)
	}
	if !strings.Contains(r.Content[0].(*sdk.TextContent).Text, `"journaled":true`) {
		t.Errorf("mark answered %s", r.Content[0].(*sdk.TextContent).Text)
	}
	var journal struct {
		Marks []struct {
			Label, Source string
		} `json:"marks"`
	}
	b, err := os.ReadFile(filepath.Join(recDir, "marks.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &journal); err != nil {
		t.Fatal(err)
	}
	n := len(journal.Marks)
	if n < 2 || journal.Marks[0].Source != "button" || journal.Marks[n-1].Label != "horn pressed" || journal.Marks[n-1].Source != "mcp" {
		t.Errorf("marks.json %s", b)
	}
	t.Logf("%d presses marked before the mark tool's; marks.json: %s", n-1, b)
}
