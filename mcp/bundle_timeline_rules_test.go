package mcp

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"fieldtap/services/rules"
)

// TestWhatHappenedShowsRuleFirings: a rule on the truck's can0 that
// fires at 10 s and clears at 15 s is two rows on can0's line, on the
// box's clock, each pointing at rule_status for the rule, whose history
// holds the same change; the changes that neither fire nor clear, and a
// firing outside the window, are not rows.
func TestWhatHappenedShowsRuleFirings(t *testing.T) {
	d, t0 := timelineTruck(t)
	silent := false
	e, err := rules.New([]rules.Rule{{Name: "can0-silent", Kind: rules.KindPortSilent, Port: "can0", Op: rules.Above, Window: time.Minute, Severity: "critical"}},
		rules.Box{Ports: flippingPorts{"can0", "can", &silent}})
	if err != nil {
		t.Fatal(err)
	}
	for _, step := range []struct {
		s      time.Duration
		silent bool
	}{{5, false}, {10, true}, {15, false}, {20, false}, {70, true}} {
		silent = step.silent
		e.Tick(t0.Add(step.s * time.Second))
	}
	d.Rules = e
	h := newHarnessOf(t, d, append(timelineTools, ruleStatusTool)...)
	env := h.ok("what_happened", map[string]any{"at": rfc(t0.Add(30 * time.Second)), "window": "±30s", "limit": MaxLimit, "kinds": []any{evRuleFiring, evRuleCleared}})
	rows := items(env)
	if len(rows) != 2 {
		t.Fatalf("rule rows %v, want the firing at 10 s and the clear at 15 s", rows)
	}
	fire, clear := rows[0], rows[1]
	if fire["kind"] != evRuleFiring || fire["time"] != rfc(t0.Add(10*time.Second)) || fire["port"] != "can0" || fire["bus"] != "can" || fire["clock"] != "box" ||
		fire["summary"] != "rule can0-silent (critical, port_silent) firing: 1 above 0" {
		t.Errorf("firing row %v", fire)
	}
	if clear["kind"] != evRuleCleared || clear["time"] != rfc(t0.Add(15*time.Second)) || !strings.HasSuffix(clear["summary"].(string), "cleared: now ok") {
		t.Errorf("cleared row %v", clear)
	}
	det := fire["detail"].(map[string]any)
	if det["tool"] != toolRuleStatus || det["args"].(map[string]any)["rule"] != "can0-silent" {
		t.Fatalf("detail %v", det)
	}
	st := h.ok(toolRuleStatus, det["args"].(map[string]any))
	var at []string
	for _, c := range st["data"].(map[string]any)["history"].([]any) {
		r := c.(map[string]any)
		at = append(at, r["to"].(string)+"@"+r["at"].(string))
	}
	if want := "firing@" + rfc(t0.Add(10*time.Second)); len(at) != 4 || at[1] != want {
		t.Errorf("rule_status history %v, want 4 changes, the second %s", at, want)
	}
	// Every kind: the rule rows sit among the truck's, in time order.
	all := items(h.ok("what_happened", map[string]any{"at": rfc(t0.Add(30 * time.Second)), "window": "±30s", "limit": MaxLimit}))
	if k := kindsOf(all); k[evRuleFiring] != 1 || k[evRuleCleared] != 1 {
		t.Errorf("kinds %v", k)
	}
}

// TestWhatHappenedSaysRuleChangesLetGo: past the engine's bound, a
// window reaching before the oldest kept change says how many were let
// go; a window within the kept ones does not.
func TestWhatHappenedSaysRuleChangesLetGo(t *testing.T) {
	d, t0 := timelineTruck(t)
	silent := false
	e, err := rules.New([]rules.Rule{{Name: "flap", Kind: rules.KindPortSilent, Port: "can0", Op: rules.Above, Window: time.Minute, Severity: "info"}},
		rules.Box{Ports: flippingPorts{"can0", "can", &silent}})
	if err != nil {
		t.Fatal(err)
	}
	const ticks = rules.HistoryLen + 6 // a change on every tick
	for i := range ticks {
		silent = i%2 == 1
		e.Tick(t0.Add(time.Duration(i) * time.Second))
	}
	d.Rules = e
	h := newHarnessOf(t, d, timelineTools...)
	at := rfc(t0.Add(ticks * time.Second))
	env := h.ok("what_happened", map[string]any{"at": at, "window": "-2h", "kinds": []any{evRuleFiring, evRuleCleared}})
	if n := pageOf(env)["total_matched"]; n != float64(rules.HistoryLen) {
		t.Errorf("%v rows, want the %d kept changes", n, rules.HistoryLen)
	}
	if w := strings.Join(anyStrings(env["warnings"]), " "); !strings.Contains(w, "6 older rule state changes were let go") {
		t.Errorf("warnings %q", w)
	}
	env = h.ok("what_happened", map[string]any{"at": at, "window": "-1m", "kinds": []any{evRuleFiring, evRuleCleared}})
	if w := strings.Join(anyStrings(env["warnings"]), " "); strings.Contains(w, "let go") {
		t.Errorf("a window within the kept changes warns %q", w)
	}
}

// TestSubscribedTimelineTellsARuleFiring: a go-sdk client subscribed to
// fieldtap://live/timeline over the truck's stores is told when a rule
// fires within the view's minute (around the newest frame, or the box's
// clock when the ports give none), and reads the row.
func TestSubscribedTimelineTellsARuleFiring(t *testing.T) {
	for _, cn := range connectors {
		t.Run(cn.name, func(t *testing.T) {
			d, _ := timelineTruck(t)
			var end time.Time
			for _, p := range d.Ports.Snapshot() {
				if p.LastTime != nil && p.LastTime.After(end) {
					end = *p.LastTime
				}
			}
			if end.IsZero() {
				end = time.Now()
			}
			silent := false
			e, err := rules.New([]rules.Rule{{Name: "can0-silent", Kind: rules.KindPortSilent, Port: "can0", Op: rules.Above, Window: time.Minute, Severity: "warning"}},
				rules.Box{Ports: flippingPorts{"can0", "can", &silent}})
			if err != nil {
				t.Fatal(err)
			}
			e.Tick(end.Add(-20 * time.Second))
			d.Rules = e
			u := &updates{}
			c := sdk.NewClient(&sdk.Implementation{Name: "timeline-test", Version: "1"}, &sdk.ClientOptions{ResourceUpdatedHandler: u.handler})
			s, _ := cn.connect(t, &liveBox{d: d}, c, timelineTools...)
			ctx := context.Background()
			if err := s.Subscribe(ctx, &sdk.SubscribeParams{URI: "fieldtap://live/timeline"}); err != nil {
				t.Fatal(err)
			}
			silent = true
			e.Tick(end.Add(-10 * time.Second))
			eventually(t, "a notification after the rule fired", func() bool { return u.n() >= 1 })
			res, err := s.ReadResource(ctx, &sdk.ReadResourceParams{URI: "fieldtap://live/timeline"})
			if err != nil {
				t.Fatal(err)
			}
			var env struct {
				Items []timelineRow `json:"items"`
			}
			if err := json.Unmarshal([]byte(res.Contents[0].Text), &env); err != nil {
				t.Fatal(err)
			}
			var fired []string
			for _, r := range env.Items {
				if r.Kind == evRuleFiring {
					fired = append(fired, r.Time.Format(time.RFC3339Nano)+" "+r.Summary)
				}
			}
			if want := end.Add(-10*time.Second).UTC().Format(time.RFC3339Nano) + " rule can0-silent (warning, port_silent) firing: 1 above 0"; len(fired) != 1 || fired[0] != want {
				t.Errorf("rule rows %v, want %s", fired, want)
			}
		})
	}
}
