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

	"github.com/creack/pty"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"fieldtap/drivers/slcan/slcantest"
)

// simButtonWait is the config's button_wait here: long enough to see the
// wait and press, short enough to sit out once.
const simButtonWait = 5 * time.Second

// TestConfirmButtonOnTheSimBoard runs the real fieldtapd with
// transmit.require_button on the sim board (confirm_file) and an slcan
// port, every other gate open, and the real `fieldtap button press`: with
// no press the send is refused by gate button and nothing reaches the
// adapter; pressed while transmit_status shows the plan waiting, with its
// blink code, the frame goes out and the audit records the press.
func TestConfirmButtonOnTheSimBoard(t *testing.T) {
	master, slave, err := pty.Open()
	if err != nil {
		t.Skipf("no pty available: %v", err)
	}
	defer master.Close()
	defer slave.Close()
	dir := t.TempDir()
	cli := filepath.Join(dir, "fieldtap")
	build := exec.Command("go", "build", "-o", cli, "fieldtap/tools/cmd/fieldtap")
	build.Env = append(os.Environ(), "CGO_ENABLED=0") // as TestMain builds the daemon
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build fieldtap: %v\n%s", err, out)
	}
	armFile, confirmFile, auditFile := filepath.Join(dir, "arm"), filepath.Join(dir, "confirm"), filepath.Join(dir, "transmit.jsonl")
	os.WriteFile(armFile, []byte("armed\n"), 0o644)
	ad := slcantest.New(master, slcantest.CANable)
	serveCtx, stopServe := context.WithCancel(context.Background())
	defer stopServe()
	go ad.Serve(serveCtx)
	cfg := filepath.Join(dir, "fieldtapd.toml")
	os.WriteFile(cfg, []byte(`board = "sim"
[transmit]
arm_file = "`+armFile+`"
confirm_file = "`+confirmFile+`"
require_button = true
button_wait = "`+simButtonWait.String()+`"
audit_file = "`+auditFile+`"
[[port]]
name = "can1"
driver = "slcan"
device = "`+slave.Name()+`"
bitrate = 250000
transmit = true
`), 0o644)
	ctx, cancel := context.WithTimeout(context.Background(), 3*giveUp)
	defer cancel()
	s, stderr, asked := connectConfirming(t, ctx, cfg, "server,can,transmit")
	defer s.Close()
	for deadline := time.Now().Add(giveUp); countCmd(ad.Commands(), "L") < 2; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("adapter never opened: %q\n%s", ad.Commands(), stderr.String())
		}
	}
	send := map[string]any{"port": "can1", "frames": []any{map[string]any{"id": "18FF02F9", "data": "425554544F4E"}}, "dry_run": false, "ack_active": true}

	// Nobody presses: refused by gate button, nothing on the wire.
	res := callTx(t, ctx, s, "can_send", send)
	if res.OK || len(res.Errors) == 0 || !strings.Contains(res.Errors[0].Message, "gate button") || len(ad.Received()) != 0 {
		t.Fatalf("unpressed can_send = %+v, %d frames", res, len(ad.Received()))
	}
	t.Logf("no press: %s", res.Errors[0].Message)
	if !strings.Contains((*asked)[0], "press the confirm button on the box while its status LED blinks") {
		t.Errorf("the question does not tell the person about the button:\n%s", (*asked)[0])
	}

	// Pressed while the plan waits.
	type called struct {
		res *sdk.CallToolResult
		err error
	}
	done := make(chan called, 1)
	go func() {
		r, err := s.CallTool(ctx, &sdk.CallToolParams{Name: "can_send", Arguments: send})
		done <- called{r, err}
	}()
	var waiting struct {
		PlanID string `json:"plan_id"`
		Code   string `json:"code"`
	}
	for deadline := time.Now().Add(simButtonWait); waiting.Code == ""; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("transmit_status never showed a plan waiting for the button")
		}
		r, err := s.CallTool(ctx, &sdk.CallToolParams{Name: "transmit_status", Arguments: map[string]any{}})
		if err != nil {
			t.Fatal(err)
		}
		var st struct {
			Data struct {
				Button struct {
					Waiting *json.RawMessage `json:"waiting"`
				} `json:"confirm_button"`
			} `json:"data"`
		}
		json.Unmarshal([]byte(r.Content[0].(*sdk.TextContent).Text), &st)
		if st.Data.Button.Waiting != nil {
			json.Unmarshal(*st.Data.Button.Waiting, &waiting)
		}
	}
	t.Logf("waiting: plan %s, LED code %s", waiting.PlanID, waiting.Code)
	var c called
	for deadline := time.Now().Add(giveUp); c.res == nil && c.err == nil; {
		if b, err := exec.Command(cli, "button", "press", "--config", cfg).CombinedOutput(); err != nil {
			t.Fatalf("fieldtap button press: %v\n%s", err, b)
		}
		select {
		case c = <-done:
		case <-time.After(500 * time.Millisecond):
			if time.Now().After(deadline) {
				t.Fatal("can_send never returned after the presses")
			}
		}
	}
	if c.err != nil || len(c.res.Content) == 0 {
		t.Fatalf("pressed can_send: %v %+v", c.err, c.res)
	}
	var out txResult
	if err := json.Unmarshal([]byte(c.res.Content[0].(*sdk.TextContent).Text), &out); err != nil {
		t.Fatal(err)
	}
	if !out.OK || out.Data.Status != "sent" || out.Data.Sent != 1 {
		t.Fatalf("pressed can_send = %+v\n%s", out, stderr.String())
	}
	if rx := ad.Received(); len(rx) != 1 || rx[0].ID != 0x18FF02F9 || rx[0].Mode != "normal" {
		t.Errorf("on the wire: %+v", rx)
	}
	events := strings.Join(auditEvents(t, auditFile), " ")
	t.Logf("audit: %s", events)
	if !strings.Contains(events, "button_waiting refused:button") || !strings.Contains(events, "button_waiting button_pressed sending sent") {
		t.Errorf("audit %s: want an unanswered wait refused, then a wait, the press, sending, sent", events)
	}
}
