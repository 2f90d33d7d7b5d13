//go:build linux

package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/creack/pty"

	"fieldtap/drivers/j1708/j1708test"
)

// TestJ1708SendThroughGatekeeper runs fieldtapd with a J1708 [[port]]
// (transmit = true) on a pty whose far end echoes like a J1708
// transceiver, and sends j1708_send over stdio through every gate: once
// clean, once with a collision injected (the driver must retry), once
// disarmed (nothing may reach the wire).
func TestJ1708SendThroughGatekeeper(t *testing.T) {
	master, slave, err := pty.Open()
	if err != nil {
		t.Skipf("no pty available: %v", err)
	}
	defer master.Close()
	defer slave.Close()
	dir := t.TempDir()
	armFile := filepath.Join(dir, "arm")
	auditFile := filepath.Join(dir, "transmit.jsonl")
	setArm := func(v string) {
		if err := os.WriteFile(armFile, []byte(v+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	setArm("armed")
	bus := j1708test.New(master)
	serveCtx, stopServe := context.WithCancel(context.Background())
	defer stopServe()
	go bus.Serve(serveCtx)

	cfg := filepath.Join(dir, "fieldtapd.toml")
	body := `board = "sim"
[transmit]
arm_file = "` + armFile + `"
audit_file = "` + auditFile + `"
[[port]]
name = "bus1"
driver = "j1708"
device = "` + slave.Name() + `"
transmit = true
# A whole echo ends the wait at once, so a long slack costs nothing here
# and keeps a loaded machine from turning an echo into no_echo.
echo_slack_ms = 10000
`
	if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*giveUp)
	defer cancel()
	s, stderr, asked := connectConfirming(t, ctx, cfg, "server,j1708,transmit")
	defer s.Close()
	// Another ECU talks first: once bus1 counts it, the port is open.
	if err := bus.Inject([]byte{0x80, 0x54, 0x00, 0x2C}); err != nil {
		t.Fatal(err)
	}
	waitAllCounting(t, ctx, s, "bus1")

	want := []byte{0xAC, 0x00, 0xF3, 0x61} // MID 172, request PID 243, checksum 61 added by the planner
	args := map[string]any{"port": "bus1", "mid": 172, "data": "00F3", "dry_run": false, "ack_active": true}
	steps := []struct {
		name     string
		arm      string
		collide  int
		wantOK   bool
		wantWire []byte
		wantGate string
	}{
		{name: "clean send", arm: "armed", wantOK: true, wantWire: want},
		{name: "collision, retried by the driver", arm: "armed", collide: 1, wantOK: true, wantWire: append(append([]byte{}, want...), want...)},
		{name: "disarmed", arm: "off", wantGate: "gate arm"},
	}
	var wire []byte
	for _, st := range steps {
		setArm(st.arm)
		bus.CollideNext(st.collide)
		res := callTx(t, ctx, s, "j1708_send", args)
		t.Logf("%s: ok %v status %s sent %d errors %+v", st.name, res.OK, res.Data.Status, res.Data.Sent, res.Errors)
		if res.OK != st.wantOK {
			t.Fatalf("%s: %+v\n%s", st.name, res, stderr.String())
		}
		if st.wantOK && (res.Data.Status != "sent" || res.Data.Sent != 1) {
			t.Errorf("%s: status %s, %d sent; want sent, 1", st.name, res.Data.Status, res.Data.Sent)
		}
		if st.wantGate != "" && (len(res.Errors) == 0 || !strings.Contains(res.Errors[0].Message, st.wantGate)) {
			t.Errorf("%s: errors %+v, want a refusal by %s", st.name, res.Errors, st.wantGate)
		}
		wire = append(wire, st.wantWire...)
		if got := bus.Received(); !bytes.Equal(got, wire) {
			t.Errorf("%s: on the wire % X, want % X", st.name, got, wire)
		}
	}
	if bus.Corrupted() != 1 {
		t.Errorf("%d echoes corrupted, want 1", bus.Corrupted())
	}
	if len(*asked) != 2 || !strings.Contains((*asked)[0], "AC 00 F3 61") {
		t.Errorf("the person was asked %q, want the message byte for byte, once per sent plan", *asked)
	}
	events := auditEvents(t, auditFile)
	wantEv := []string{"started", "planned", "confirmation_asked", "sending", "sent", "planned", "confirmation_asked", "sending", "sent", "planned", "refused:arm"}
	if strings.Join(events, " ") != strings.Join(wantEv, " ") {
		t.Errorf("audit events %v\nwant %v", events, wantEv)
	}
}
