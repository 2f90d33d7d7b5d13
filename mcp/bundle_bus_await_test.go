package mcp

import (
	"strings"
	"testing"
)

// TestAwaitBus: conditions that hold are met at once with their
// evidence, ones that do not hold pass the deadline without an error,
// pgn_seen waits for a message that arrives during the call, and missing
// arguments or ports are refused before any wait.
func TestAwaitBus(t *testing.T) {
	b := newLiveBox(t)
	s := testServer(t, b.d, awaitBus)
	data := func(env map[string]any) map[string]any { return env["data"].(map[string]any) }
	tests := []struct {
		name     string
		args     map[string]any
		met      bool
		evidence string
	}{
		{name: "clear before any DM1", args: map[string]any{"condition": "dm1_clear"}, met: true, evidence: "no DM1 lists an active DTC"},
		{name: "no active DM1 yet", args: map[string]any{"condition": "dm1_active", "timeout_seconds": 1}, evidence: "no active DTC in any DM1"},
		{name: "no claim conflict", args: map[string]any{"condition": "claim_conflict", "timeout_seconds": 1}, evidence: "no new address-claim conflict"},
		{name: "an empty J1587 fault table", args: map[string]any{"condition": "j1587_fault", "timeout_seconds": 1}, evidence: "no active J1587 code"},
		{name: "no whole second of load yet", args: map[string]any{"condition": "bus_load_above", "load_pct": 0, "timeout_seconds": 1}, evidence: "no whole second counted yet"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, env := callTool(t, s, "await_bus", tc.args)
			d := data(env)
			if d["met"] != tc.met || d["deadline_passed"] == tc.met || d["evidence"] != tc.evidence {
				t.Errorf("answer %v", d)
			}
		})
	}
	b.feed(t, dm1)
	_, env := callTool(t, s, "await_bus", map[string]any{"condition": "dm1_active", "sa": 0})
	if d := data(env); d["met"] != true || d["evidence"] != "SA 0 on can0 reports SPN 110 FMI 0 active" {
		t.Errorf("after the DM1: %v", d)
	}
	_, env = callTool(t, s, "await_bus", map[string]any{"condition": "dm1_active", "sa": 3, "timeout_seconds": 1})
	if d := data(env); d["met"] != false {
		t.Errorf("another source's DM1 met the wait: %v", d)
	}

	// pgn_seen counts only messages after the call starts: EEC1 is held
	// already, so the call waits until one more arrives.
	done := make(chan map[string]any)
	go func() {
		_, env := callTool(t, s, "await_bus", map[string]any{"condition": "pgn_seen", "pgn": 61444, "timeout_seconds": 30})
		done <- env
	}()
	var got map[string]any
	for got == nil {
		select {
		case got = <-done:
		default:
			b.feed(t, eec1)
		}
	}
	if d := data(got); d["met"] != true || !strings.HasPrefix(d["evidence"].(string), "PGN 61444 from SA 0 on can0") {
		t.Errorf("pgn_seen: %v", d)
	}

	for _, tc := range []struct {
		name string
		args map[string]any
		code string
		msg  string
	}{
		{name: "no condition", args: map[string]any{}, code: CodeInvalidArgument, msg: "condition"},
		{name: "pgn_seen without pgn", args: map[string]any{"condition": "pgn_seen"}, code: CodeInvalidArgument, msg: "pgn_seen needs pgn"},
		{name: "load without a level", args: map[string]any{"condition": "bus_load_below"}, code: CodeInvalidArgument, msg: "bus_load_below needs load_pct"},
		{name: "unknown port", args: map[string]any{"condition": "dm1_active", "port": "can9"}, code: CodeInvalidArgument, msg: `no J1939 port "can9"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, env := callTool(t, s, "await_bus", tc.args)
			if code, msg, _ := firstError(t, env); code != tc.code || !strings.Contains(msg, tc.msg) {
				t.Errorf("%s: %s", code, msg)
			}
		})
	}
	// A box without a CAN port has its stores, empty, and no port to name.
	_, env = callTool(t, testServer(t, fullDeps(t), awaitBus), "await_bus", map[string]any{"condition": "dm1_active", "port": "can0"})
	if code, msg, _ := firstError(t, env); code != CodeInvalidArgument || !strings.Contains(msg, "this box has no J1939 port") {
		t.Errorf("without a CAN port: %s %s", code, msg)
	}
}
