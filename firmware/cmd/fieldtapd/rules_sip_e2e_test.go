package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"fieldtap/tools/refdata"
)

// TestSIPRuleFiresOnAReplayedCapture: fieldtapd reads the SIPp load run
// (1334 calls, 102 of the 1250 with a final answered 200, the rest
// refused 403: PROVENANCE.md) with --source; a sip_asr rule on the
// peer's address with a guard of 1000 attempts fires on the box once the
// file is read, rule_status over MCP gives its value 102/1250, its
// population and the group_dialogs call that shows the figures, and
// /metrics exports fieldtap_rule_state 1.
func TestSIPRuleFiresOnAReplayedCapture(t *testing.T) {
	path := refdata.File(t, "sip", "branch-scenario-sipp.pcapng")
	d := startDaemon(t, "board = \"none\"\n[status]\nlisten = [\"127.0.0.1:0\"]\n"+
		"[[rule]]\nname = \"peer-asr\"\nkind = \"sip_asr\"\ngroup = \"dst_ip\"\nkey = \"127.0.0.1\"\nop = \"below\"\nvalue = 0.5\n"+
		"window = \"1h\"\nmin_samples = 1000\nseverity = \"critical\"\n", "--source", path)
	urlRe := regexp.MustCompile(`url=(http://\S+)`)
	m := urlRe.FindStringSubmatch(d.stderr.String())
	for deadline := time.Now().Add(giveUp); m == nil; m = urlRe.FindStringSubmatch(d.stderr.String()) {
		if time.Now().After(deadline) {
			t.Fatalf("no MCP address in the log:\n%s", d.stderr)
		}
		time.Sleep(20 * time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*giveUp)
	defer cancel()
	s, err := newClient().Connect(ctx, &sdk.StreamableClientTransport{Endpoint: m[1]}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, d.stderr)
	}
	defer s.Close()
	type verdict struct {
		Rule, State, Group, Key, Why string
		Value                        *float64
		Samples                      int
		Tool                         string             `json:"evidence_tool"`
		Args                         map[string]string  `json:"evidence_args"`
		Figures                      map[string]float64 `json:"evidence_figures"`
	}
	var v verdict
	deadline := time.Now().Add(giveUp)
	// Every attempt of the file measured: the box evaluates every 5 s,
	// so the verdict after the file is read holds all 1250.
	for v.State != "firing" || v.Samples != 1250 {
		if time.Now().After(deadline) {
			t.Fatalf("the rule never fired over the whole file: %+v\n%s", v, d.stderr)
		}
		time.Sleep(200 * time.Millisecond)
		res, err := s.CallTool(ctx, &sdk.CallToolParams{Name: "rule_status", Arguments: map[string]any{}})
		if err != nil || res.IsError {
			t.Fatalf("rule_status: %v %+v", err, res)
		}
		var env struct {
			Data struct{ Rules []verdict }
		}
		if err := json.Unmarshal([]byte(res.Content[0].(*sdk.TextContent).Text), &env); err != nil || len(env.Data.Rules) != 1 {
			t.Fatalf("rule_status answer: %v %+v", err, env)
		}
		v = env.Data.Rules[0]
	}
	if v.Value == nil || math.Abs(*v.Value-102.0/1250) > 1e-9 || v.Group != "dst_ip" || v.Key != "127.0.0.1" || v.Tool != "group_dialogs" ||
		v.Args["filter"] != `dst_ip == "127.0.0.1"` || v.Figures["answered"] != 102 || v.Figures["attempts"] != 1250 {
		t.Errorf("verdict %+v", v)
	}
	metrics := string(d.get(t, "/metrics"))
	for _, want := range []string{`fieldtap_rule_state{rule="peer-asr",severity="critical"} 1`, fmt.Sprintf(`fieldtap_rule_value{rule="peer-asr"} %v`, 102.0/1250)} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s:\n%s", want, grepRule([]byte(metrics)))
		}
	}
	t.Logf("verdict %+v", v)
}
