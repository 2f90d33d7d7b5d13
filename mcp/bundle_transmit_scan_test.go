package mcp

import (
	"strings"
	"testing"

	"fieldtap/mcp/untrusted"
)

// A reads-only scan on the simulated engine ECU: one plan, read-class, a
// tally row per request in order, the VIN fenced as the ECU's words, and
// the session list refused beyond default and extended.
func TestUDSScanTally(t *testing.T) {
	const vin = "1FUJGLDR5CLBP8834"
	b := newFakeBus(vin)
	c := newChecker(t, testServer(t, transmitDeps(t, b), transmitTools...))
	args := map[string]any{"port": "can0", "dids": []any{"F190", "F18C-F18D"}}
	_, env := c.call("uds_scan", args)
	plan := env["data"].(map[string]any)["plan"].(map[string]any)
	if plan["count"].(float64) != 3 || plan["risk"] != "read" || !strings.Contains(plan["text"].(string), "never sent by this plan") {
		t.Fatalf("dry run plan %v", plan)
	}
	args["dry_run"], args["ack_active"] = false, true
	r, env := c.call("uds_scan", args)
	if r.IsError {
		t.Fatal(r.Content[0].Text)
	}
	rows := env["data"].(map[string]any)["scan"].([]any)
	if len(rows) != 3 {
		t.Fatalf("scan %v", rows)
	}
	want := []string{"0xF190", "0xF18C", "0xF18D"}
	for i, x := range rows {
		row := x.(map[string]any)
		if row["did"] != want[i] || row["step"].(float64) != float64(i+1) || row["request_id"] != "7E0" || row["outcome"] == "" {
			t.Errorf("row %d: %v", i, row)
		}
	}
	first := rows[0].(map[string]any)
	if first["outcome"] != "positive" || first["text"] != untrusted.Open+vin+untrusted.Close {
		t.Errorf("the VIN row %v, want positive with the VIN fenced", first)
	}
	if sent := b.sent(); len(sent) < 3 || !strings.HasPrefix(sent[0], "7E0#0322F190") {
		t.Errorf("on the wire %v", sent)
	}
	if r, _ := c.call("uds_scan", map[string]any{"port": "can0", "dids": []any{"F190"}, "sessions": []any{"programming"}}); !r.IsError {
		t.Error("the programming session was planned")
	}
}
