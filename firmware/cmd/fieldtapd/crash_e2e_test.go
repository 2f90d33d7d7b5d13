//go:build linux

package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"fieldtap/drivers/slcan/slcantest"
)

// crashFrames is the long plan killed mid-way: the most frames a plan
// holds, 20 ms apart, about five seconds on the wire.
const crashFrames = 256

// TestKilledMidPlanComesBackListenOnly is the kill -9: the real
// fieldtapd runs a 256-frame can_send on an slcan adapter (a simulated
// CANable on a pty) and is killed with SIGKILL after a few frames. The
// adapter is left open in normal mode, as measured. The next fieldtapd
// puts it back in listen-only before anything else (its first commands
// are C, S5, L), and its transmit audit records that the plan ended
// mid-way; transmit_status says the same.
func TestKilledMidPlanComesBackListenOnly(t *testing.T) {
	master, slave, err := pty.Open()
	if err != nil {
		t.Skipf("no pty available: %v", err)
	}
	defer master.Close()
	defer slave.Close()
	dir := t.TempDir()
	armFile, auditFile := filepath.Join(dir, "arm"), filepath.Join(dir, "transmit.jsonl")
	if err := os.WriteFile(armFile, []byte("armed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ad := slcantest.New(master, slcantest.CANable)
	serveCtx, stopServe := context.WithCancel(context.Background())
	defer stopServe()
	go ad.Serve(serveCtx)
	cfg := filepath.Join(dir, "fieldtapd.toml")
	body := `board = "sim"
[transmit]
arm_file = "` + armFile + `"
audit_file = "` + auditFile + `"
[[port]]
name = "can1"
driver = "slcan"
device = "` + slave.Name() + `"
bitrate = 250000
transmit = true
`
	if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*giveUp)
	defer cancel()
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		for deadline := time.Now().Add(giveUp); !ok(); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: never; adapter commands %q", what, ad.Commands())
			}
		}
	}

	s, cmd, stderr, _ := startConfirming(t, ctx, cfg, "server,can,transmit")
	waitFor("first run's capture session open", func() bool { return countCmd(ad.Commands(), "L") >= 2 })
	frames := make([]any, crashFrames)
	for i := range frames {
		frames[i] = map[string]any{"id": "18FF01F9", "data": "4B494C4C", "delay_ms": 20}
	}
	go s.CallTool(ctx, &sdk.CallToolParams{Name: "can_send", Arguments: map[string]any{"port": "can1", "frames": frames, "dry_run": false, "ack_active": true}})
	waitFor("frames on the wire", func() bool { return len(ad.Received()) >= 5 })
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	// Close reaps the killed daemon: the go-sdk's CommandTransport owns
	// cmd.Wait, so the test must not wait on the process too.
	s.Close()
	sent := len(ad.Received())
	if ad.Mode() != "normal" || sent >= crashFrames {
		t.Fatalf("after kill -9: adapter %s, %d frames; want it left normal mid-plan\n%s", ad.Mode(), sent, stderr.String())
	}
	before := len(ad.Commands())
	t.Logf("killed after %d of %d frames; the adapter is left %s", sent, crashFrames, ad.Mode())

	s2, _, stderr2, _ := startConfirming(t, ctx, cfg, "server,can,transmit")
	defer s2.Close()
	waitFor("second run's start-up step", func() bool { return ad.Mode() == "listen" })
	if got := ad.Commands()[before:]; len(got) < 3 || !slices.Equal(got[:3], []string{"C", "S5", "L"}) {
		t.Errorf("the restarted daemon's first commands %q, want C, S5, L", got)
	}
	if n := len(ad.Received()); n != sent {
		t.Errorf("%d frames after the restart, want still %d", n, sent)
	}

	// The audit: sending, no result, then this run's interrupted and started.
	type rec struct{ Event, PlanID, Port, Message string }
	var recs []rec
	b, _ := os.ReadFile(auditFile)
	for line := range strings.SplitSeq(strings.TrimSpace(string(b)), "\n") {
		var r struct {
			Event   string `json:"event"`
			PlanID  string `json:"plan_id"`
			Port    string `json:"port"`
			Message string `json:"message"`
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("audit line %q: %v", line, err)
		}
		recs = append(recs, rec(r))
	}
	var plan string
	for _, r := range recs {
		if r.Event == "sending" {
			plan = r.PlanID
		}
	}
	last2 := recs[len(recs)-2:]
	if plan == "" || last2[0].Event != "interrupted" || last2[0].PlanID != plan || last2[0].Port != "can1" ||
		!strings.Contains(last2[0].Message, "ended mid-plan") || !strings.Contains(last2[0].Message, "put back in listen-only") ||
		last2[1].Event != "started" || !strings.Contains(last2[1].Message, "can1 listen-only") {
		t.Fatalf("audit ends %+v; want interrupted (plan %s on can1) then started\n%s", last2, plan, stderr2.String())
	}
	res, err := s2.CallTool(ctx, &sdk.CallToolParams{Name: "transmit_status", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Data struct {
			PreviousRun struct {
				Interrupted []struct {
					PlanID string `json:"plan_id"`
				} `json:"interrupted"`
				PortsReset []struct{ Port, Mode string } `json:"ports_reset"`
			} `json:"previous_run"`
		} `json:"data"`
	}
	json.Unmarshal([]byte(res.Content[0].(*sdk.TextContent).Text), &st)
	if pr := st.Data.PreviousRun; len(pr.Interrupted) != 1 || pr.Interrupted[0].PlanID != plan || len(pr.PortsReset) != 1 || pr.PortsReset[0].Mode != "listen-only" {
		t.Errorf("transmit_status previous_run %+v", pr)
	}
}
