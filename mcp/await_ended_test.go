package mcp

import (
	"testing"

	"fieldtap/services/ports"
)

// TestWaitsEndWithTheCapture: once every port a wait reads has ended,
// await_condition and await_bus answer unmet with capture_ended at once,
// well inside a 60 s deadline; while a port is still capturing they wait
// out their deadline as before. A port of another kind does not hold a
// wait: the SPAN port's state is not await_bus's concern.
func TestWaitsEndWithTheCapture(t *testing.T) {
	data := func(env map[string]any) map[string]any { return env["data"].(map[string]any) }
	tests := []struct {
		name        string
		span, can   string
		tool        string
		args        map[string]any
		ended, past bool
	}{
		{"sip ended", ports.StateEnded, ports.StateCapturing, "await_condition", map[string]any{"filter": "call_id ~ never", "timeout_seconds": 60}, true, false},
		{"sip live", ports.StateCapturing, ports.StateEnded, "await_condition", map[string]any{"filter": "call_id ~ never", "timeout_seconds": 1}, false, true},
		{"bus ended", ports.StateCapturing, ports.StateEnded, "await_bus", map[string]any{"condition": "claim_conflict", "timeout_seconds": 60}, true, false},
		{"bus live", ports.StateEnded, ports.StateSilent, "await_bus", map[string]any{"condition": "claim_conflict", "timeout_seconds": 1}, false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := withPorts(fullDeps(t), fakePorts{{Name: "span0", Kind: "ethernet", State: tc.span}, {Name: "can0", Kind: "can", State: tc.can}})
			s := testServer(t, d, awaitCondition, awaitBus)
			_, env := callTool(t, s, tc.tool, tc.args)
			a := data(env)
			if a["met"] != false || a["capture_ended"] != tc.ended || a["deadline_passed"] != tc.past {
				t.Errorf("answer %v", a)
			}
			if env["coverage"] == nil {
				t.Errorf("no coverage block: %v", env)
			}
		})
	}
}
