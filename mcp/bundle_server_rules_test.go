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

// flippingPorts is one port, silent while silent is set, else capturing.
type flippingPorts struct {
	name, kind string
	silent     *bool
}

func (p flippingPorts) Snapshot() []ports.Status {
	st := ports.StateCapturing
	if *p.silent {
		st = ports.StateSilent
	}
	return []ports.Status{{Name: p.name, Kind: p.kind, Live: true, State: st}}
}

// TestRuleStatusPagesTheHistory: the state changes come oldest first,
// limit per call with a cursor to the rest, each with its value; rule
// selects one rule's verdict and changes; an unknown rule is refused
// with the names configured.
func TestRuleStatusPagesTheHistory(t *testing.T) {
	silent := false
	lister := flippingPorts{"span0", "ethernet", &silent}
	e, err := rules.New([]rules.Rule{
		{Name: "span-silent", Kind: rules.KindPortSilent, Port: "span0", Op: rules.Above, Window: time.Minute, Severity: "critical"},
		{Name: "span-drops", Kind: rules.KindPortDrops, Port: "span0", Op: rules.Above, Window: time.Minute, Severity: "warning"},
	}, rules.Box{Ports: lister})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	// span-silent: no_data→ok, then firing, ok, firing, ok; span-drops
	// (a total, two samples) no_data→ok at the second tick.
	for i := range 5 {
		silent = i%2 == 1
		e.Tick(t0.Add(time.Duration(i) * 5 * time.Second))
	}
	d := withPorts(testDeps(), lister)
	d.Rules = e
	s := testServer(t, d, ruleStatusTool)
	var seen []string
	cursor := ""
	for page := 0; ; page++ {
		a := map[string]any{"limit": 2}
		if cursor != "" {
			a["cursor"] = cursor
		}
		_, env := callTool(t, s, toolRuleStatus, a)
		data := env["data"].(map[string]any)
		if len(data["rules"].([]any)) != 2 {
			t.Fatalf("page %d rules %v", page, data["rules"])
		}
		for _, h := range data["history"].([]any) {
			r := h.(map[string]any)
			seen = append(seen, fmt.Sprintf("%v %v:%v>%v=%v", r["seq"], r["rule"], r["from"], r["to"], r["value"]))
		}
		pg := data["history_page"].(map[string]any)
		if pg["total_matched"] != 6.0 {
			t.Errorf("page %d total_matched %v, want 6", page, pg["total_matched"])
		}
		if cursor, _ = pg["next_cursor"].(string); cursor == "" {
			break
		}
	}
	want := "[0 span-silent:no_data>ok=0 1 span-silent:ok>firing=1 2 span-drops:no_data>ok=0 3 span-silent:firing>ok=0 4 span-silent:ok>firing=1 5 span-silent:firing>ok=0]"
	if got := fmt.Sprint(seen); got != want {
		t.Errorf("history %s\nwant    %s", got, want)
	}
	_, env := callTool(t, s, toolRuleStatus, map[string]any{"rule": "span-drops"})
	data := env["data"].(map[string]any)
	if rs, h := data["rules"].([]any), data["history"].([]any); len(rs) != 1 || rs[0].(map[string]any)["rule"] != "span-drops" ||
		len(h) != 1 || h[0].(map[string]any)["seq"] != 2.0 {
		t.Errorf("one rule: %v", data)
	}
	_, env = callTool(t, s, toolRuleStatus, map[string]any{"rule": "nope"})
	if code, msg, hint := firstError(t, env); code != CodeInvalidArgument || !strings.Contains(msg, `no rule "nope"`) || !strings.Contains(hint, "span-silent, span-drops") {
		t.Errorf("unknown rule: %s %s %s", code, msg, hint)
	}
}
