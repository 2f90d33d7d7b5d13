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

	"fieldtap/board/sim/j1939gen"
)

// TestRehearseTransmitOnTheSimBoard is the demo's walk-through through
// the real fieldtapd on the sim board alone: can0 enabled by
// transmit.sim_ports, the arm file, require_button with the press file
// pressed by the real `fieldtap button press`. Disarmed, the refusal's
// hint names the arm file; armed and pressed, a J1939 Request for the VIN
// (from 0xFA: the sim truck's workshop tool holds 0xF9) is answered by
// the simulated engine by BAM, DM1 carries the fault the truck
// broadcasts, UDS F190 comes back multi-frame after the box's flow
// control, a session change answers 0x50 with P2 timings; the request is
// on the bus in can_frames, and the audit records each plan.
func TestRehearseTransmitOnTheSimBoard(t *testing.T) {
	dir := t.TempDir()
	cli := filepath.Join(dir, "fieldtap")
	build := exec.Command("go", "build", "-o", cli, "fieldtap/tools/cmd/fieldtap")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build fieldtap: %v\n%s", err, out)
	}
	armFile, confirmFile, auditFile := filepath.Join(dir, "arm"), filepath.Join(dir, "confirm"), filepath.Join(dir, "transmit.jsonl")
	cfg := filepath.Join(dir, "fieldtapd.toml")
	if err := os.WriteFile(cfg, []byte(`board = "sim"
[transmit]
sim_ports = ["can0"]
arm_file = "`+armFile+`"
confirm_file = "`+confirmFile+`"
require_button = true
button_wait = "`+simButtonWait.String()+`"
audit_file = "`+auditFile+`"
`), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*giveUp)
	defer cancel()
	s, stderr, _ := connectConfirming(t, ctx, cfg, "server,can,j1939,transmit")
	defer s.Close()

	vin := map[string]any{"port": "can0", "pgn": 65260, "da": 0, "sa": 0xFA, "dry_run": false, "ack_active": true}
	// Disarmed: refused, and the hint says what arms this board.
	res := callTx(t, ctx, s, "j1939_request", vin)
	t.Logf("disarmed: %+v", res.Errors)
	if res.OK || len(res.Errors) == 0 || !strings.Contains(res.Errors[0].Message, "gate arm") || !strings.Contains(res.Errors[0].Hint, armFile) {
		t.Fatalf("disarmed j1939_request = %+v, want gate arm naming %s", res, armFile)
	}
	if err := os.WriteFile(armFile, []byte("armed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	began := time.Now()

	res = pressedCall(t, ctx, s, cli, cfg, "j1939_request", vin)
	t.Logf("VIN: status %s, sent %d, answers %+v", res.Data.Status, res.Data.Sent, res.Data.Answers)
	if !res.OK || res.Data.Status != "sent" || res.Data.Sent != 1 {
		t.Fatalf("j1939_request = %+v\n%s", res, stderr.String())
	}
	if len(res.Data.Answers) == 0 || res.Data.Answers[0].From != "00" || res.Data.Answers[0].PGN != 65260 ||
		!strings.Contains(res.Data.Answers[0].Via, "BAM") || !strings.Contains(res.Data.Answers[0].Text, j1939gen.VIN) {
		t.Errorf("answers %+v, want the VIN %s from 00 by BAM", res.Data.Answers, j1939gen.VIN)
	}

	res = pressedCall(t, ctx, s, cli, cfg, "j1939_request_dm", map[string]any{"port": "can0", "dm": "DM1", "da": 0, "sa": 0xFA, "dry_run": false, "ack_active": true})
	t.Logf("DM1: status %s, answers %+v", res.Data.Status, res.Data.Answers)
	if !res.OK || len(res.Data.Answers) == 0 || res.Data.Answers[0].PGN != 65226 || !strings.Contains(strings.ToUpper(res.Data.Answers[0].Data), "10FF6E000003") {
		t.Errorf("DM1 = %+v, want SPN %d FMI %d (lamps 10, occurrences 3) from the engine", res, j1939gen.FaultSPN, j1939gen.FaultFMI)
	}

	res = pressedCall(t, ctx, s, cli, cfg, "uds_request", map[string]any{"port": "can0", "service": "read_did", "did": "F190", "dry_run": false, "ack_active": true})
	t.Logf("UDS F190: status %s, sent %d, answers %+v", res.Data.Status, res.Data.Sent, res.Data.Answers)
	if !res.OK || res.Data.Sent != 2 || len(res.Data.Answers) != 1 || res.Data.Answers[0].From != "7E8" || !strings.Contains(res.Data.Answers[0].Text, j1939gen.VIN) {
		t.Errorf("uds_request F190 = %+v, want the request and our flow control sent and the VIN from 7E8", res)
	}

	res = pressedCall(t, ctx, s, cli, cfg, "uds_request", map[string]any{"port": "can0", "service": "session_control", "session": 3, "dry_run": false, "ack_active": true})
	t.Logf("UDS 10 03: status %s, answers %+v", res.Data.Status, res.Data.Answers)
	if !res.OK || len(res.Data.Answers) != 1 || !strings.HasPrefix(strings.ToUpper(res.Data.Answers[0].Data), "5003003201F4") {
		t.Errorf("uds_request 10 03 = %+v, want 50 03 with P2 50 ms, P2* 5000 ms", res)
	}

	// The request is on the bus, captured with the writer's time.
	r, err := s.CallTool(ctx, &sdk.CallToolParams{Name: "can_frames", Arguments: map[string]any{"port": "can0", "id": "18EA00FA"}})
	if err != nil {
		t.Fatal(err)
	}
	text := r.Content[0].(*sdk.TextContent).Text
	var frames struct {
		Items []struct {
			Time time.Time `json:"time"`
			Data string    `json:"data"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(text), &frames); err != nil {
		t.Fatal(err)
	}
	t.Logf("can_frames 18EA00FA: %+v", frames.Items)
	if len(frames.Items) != 2 { // the VIN and the DM1 requests
		t.Errorf("can_frames 18EA00FA = %s, want our two requests", text)
	}
	for _, f := range frames.Items {
		if f.Time.Before(began.Add(-time.Second)) || f.Time.After(time.Now().Add(time.Second)) {
			t.Errorf("request captured at %v, want between %v and now", f.Time, began)
		}
	}

	events := strings.Join(auditEvents(t, auditFile), " ")
	t.Logf("audit: %s", events)
	if n := strings.Count(events, "button_waiting button_pressed sending sent"); n != 4 {
		t.Errorf("audit %s: want 4 plans waited for, pressed, sent; got %d", events, n)
	}
	if !strings.Contains(events, "refused:arm") {
		t.Errorf("audit %s: want the disarmed refusal", events)
	}
}

// pressedCall calls a transmitting tool and presses the confirm button
// with the real CLI until the call returns.
func pressedCall(t *testing.T, ctx context.Context, s *sdk.ClientSession, cli, cfg, tool string, args map[string]any) txResult {
	t.Helper()
	type called struct {
		res *sdk.CallToolResult
		err error
	}
	done := make(chan called, 1)
	go func() {
		r, err := s.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
		done <- called{r, err}
	}()
	var c called
	for deadline := time.Now().Add(giveUp); c.res == nil && c.err == nil; {
		select {
		case c = <-done:
			continue
		case <-time.After(300 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never returned after the presses", tool)
		}
		if b, err := exec.Command(cli, "button", "press", "--config", cfg).CombinedOutput(); err != nil {
			t.Fatalf("fieldtap button press: %v\n%s", err, b)
		}
	}
	if c.err != nil || len(c.res.Content) == 0 {
		t.Fatalf("%s: %v %+v", tool, c.err, c.res)
	}
	var out txResult
	if err := json.Unmarshal([]byte(c.res.Content[0].(*sdk.TextContent).Text), &out); err != nil {
		t.Fatal(err)
	}
	return out
}
