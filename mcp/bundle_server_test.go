package mcp

import (
	"testing"

	"fieldtap/services/budget"
	"fieldtap/services/ports"
)

// budgetPorts is a port list that also reports the memory budget, as the
// daemon's registry does.
type budgetPorts struct {
	fakePorts
	st budget.Status
}

func (b budgetPorts) Budget() budget.Status { return b.st }

// TestCaptureStatusShowsTheBudget: capture_status carries the budget with
// every share, and an empty one (not null) from a lister without it.
func TestCaptureStatusShowsTheBudget(t *testing.T) {
	d := withPorts(testDeps(), budgetPorts{fakePorts: fakePorts{{Name: "can0", Kind: "can"}}, st: budget.Status{
		BudgetBytes: 128 << 20, From: "board profile sim", PoolBytes: 53687091,
		Stores: []budget.Use{{Store: budget.CANFrames, Port: "can0", MaxBytes: 1 << 20}, {Store: budget.Handoff, Port: "can0", Reserved: true}},
	}})
	_, env := callTool(t, testServer(t, d, captureStatusTool), "capture_status", nil)
	mb := env["data"].(map[string]any)["memory_budget"].(map[string]any)
	if mb["budget_bytes"] != float64(128<<20) || mb["from"] != "board profile sim" || len(mb["stores"].([]any)) != 2 {
		t.Errorf("memory_budget = %v", mb)
	}
	d = withPorts(d, fakePorts{ports.Status{Name: "can0", Kind: "can"}})
	_, env = callTool(t, testServer(t, d, captureStatusTool), "capture_status", nil)
	if st := env["data"].(map[string]any)["memory_budget"].(map[string]any)["stores"]; st == nil || len(st.([]any)) != 0 {
		t.Errorf("without a budget: stores = %v, want []", st)
	}
}
