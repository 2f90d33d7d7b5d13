package mcp

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"fieldtap/services/ports"
	"fieldtap/services/rules"
)

// TestRuleStatusGivesEveryVerdict: a silent port's rule firing with its
// evidence, a rule on a missing port no_data with why, in configuration
// order; and a box without rules says so.
func TestRuleStatusGivesEveryVerdict(t *testing.T) {
	lister := fakePorts{ports.Status{Name: "span0", Kind: "ethernet", Live: true, State: ports.StateSilent, Frames: 7}}
	e, err := rules.New([]rules.Rule{
		{Name: "span-silent", Kind: rules.KindPortSilent, Port: "span0", Op: rules.Above, Window: time.Minute, Severity: "critical"},
		{Name: "gone-drops", Kind: rules.KindPortDrops, Port: "nope", Op: rules.Above, Window: time.Minute, Severity: "warning"},
	}, rules.Box{Ports: lister})
	if err != nil {
		t.Fatal(err)
	}
	e.Tick(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	d := withPorts(testDeps(), lister)
	d.Rules = e
	s := testServer(t, d, ruleStatusTool)
	_, env := callTool(t, s, toolRuleStatus, nil)
	items := env["data"].(map[string]any)["rules"].([]any)
	if len(items) != 2 {
		t.Fatalf("items %v", items)
	}
	fire, none := items[0].(map[string]any), items[1].(map[string]any)
	if fire["rule"] != "span-silent" || fire["state"] != "firing" || fire["value"] != 1.0 || fire["evidence_tool"] != "capture_status" ||
		fire["evidence_figures"].(map[string]any)["frames"] != 7.0 || fire["since"] != "2026-01-01T00:00:00Z" {
		t.Errorf("firing row %v", fire)
	}
	if none["state"] != "no_data" || none["value"] != nil || !strings.Contains(none["why"].(string), `no port "nope"`) {
		t.Errorf("no_data row %v", none)
	}
	_, env = callTool(t, testServer(t, testDeps(), ruleStatusTool), toolRuleStatus, nil)
	if len(env["data"].(map[string]any)["rules"].([]any)) != 0 || !strings.Contains(fmt.Sprint(env["warnings"]), "no [[rule]]") {
		t.Errorf("no rules: %v", env)
	}
}
