package mcp

import (
	"context"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func bundleDefs(t *testing.T, names ...string) []toolDef {
	t.Helper()
	defs, err := loadBundles(fullDeps(t), names)
	if err != nil {
		t.Fatal(err)
	}
	return defs
}

// TestPromptsFollowTheLoadedTools: a go-sdk client over stdio and HTTP
// sees a workflow only when every tool it names is loaded, gets its
// steps with the arguments written in, and is refused a missing
// required argument; the truck triage's request step appears only with
// the transmit bundle.
func TestPromptsFollowTheLoadedTools(t *testing.T) {
	all := []string{"bad_audio", "bus_health_check", "failed_call", "j1708_fault_triage", "one_way_audio", "site_failing_calls", "site_under_attack", "truck_fault_triage"}
	tests := []struct {
		name    string
		bundles []string
		want    []string
	}{
		{name: "default bundles", bundles: DefaultBundles(true), want: all},
		{name: "sip alone", bundles: []string{"server", "sip"}, want: []string{"failed_call", "site_failing_calls"}},
		{name: "sip and media", bundles: []string{"sip", "media"}, want: []string{"bad_audio", "failed_call", "one_way_audio", "site_failing_calls"}},
		{name: "j1939 without can", bundles: []string{"j1939"}, want: []string{"truck_fault_triage"}},
		{name: "server alone", bundles: []string{"server"}, want: nil},
	}
	for _, cn := range connectors {
		t.Run(cn.name, func(t *testing.T) {
			ctx := context.Background()
			for _, tc := range tests {
				s, _ := cn.connect(t, newLiveBox(t), sdk.NewClient(&sdk.Implementation{Name: "prompt-test", Version: "1"}, nil), bundleDefs(t, tc.bundles...)...)
				res, err := s.ListPrompts(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for _, p := range res.Prompts {
					got = append(got, p.Name)
				}
				slices.Sort(got)
				if !slices.Equal(got, tc.want) {
					t.Errorf("%s: prompts %v, want %v", tc.name, got, tc.want)
				}
			}
			s, _ := cn.connect(t, newLiveBox(t), sdk.NewClient(&sdk.Implementation{Name: "prompt-test", Version: "1"}, nil), bundleDefs(t, DefaultBundles(true)...)...)
			if _, err := s.GetPrompt(ctx, &sdk.GetPromptParams{Name: "failed_call"}); err == nil || !strings.Contains(err.Error(), "needs call_id") {
				t.Errorf("failed_call without call_id: %v", err)
			}
			if _, err := s.GetPrompt(ctx, &sdk.GetPromptParams{Name: "failed_call", Arguments: map[string]string{"call_id": "a\x1b[2Jb"}}); err == nil {
				t.Error("a control character was written into a prompt")
			}
			if text := promptText(t, s, "failed_call", map[string]string{"call_id": "call-3"}); !strings.Contains(text, "1. Call triage_call with call_id: call-3 ") {
				t.Errorf("failed_call text:\n%s", text)
			}
			if text := promptText(t, s, "truck_fault_triage", map[string]string{"sa": "0"}); !strings.Contains(text, "(sa: 0)") || strings.Contains(text, "j1939_request") ||
				!strings.Contains(text, "no transmit tools loaded") {
				t.Errorf("truck triage without transmit:\n%s", text)
			}
			// The site prompts write the window into timeline's call, end
			// with the answer, and name the security tool only when loaded.
			text := promptText(t, s, "site_failing_calls", map[string]string{"since": "2026-12-01T08:00:00Z"})
			if !strings.Contains(text, "2. Call timeline (since: 2026-12-01T08:00:00Z)") || !strings.Contains(text, "call sip_security_findings") ||
				!strings.HasPrefix(text[strings.LastIndex(strings.TrimSuffix(text, "\n"), "\n")+1:], "8. Answer:") {
				t.Errorf("site_failing_calls text:\n%s", text)
			}
			if text := promptText(t, s, "site_under_attack", nil); !strings.Contains(text, "Call timeline (the whole capture)") || !strings.Contains(text, "6. For each source to block, call generate_fail2ban_rule") ||
				!strings.Contains(text, "\n7. Answer:") {
				t.Errorf("site_under_attack text:\n%s", text)
			}
			if text := promptText(t, s, "bad_audio", map[string]string{"call_id": "call-3"}); !strings.Contains(text, "2. Call rtp_streams with call_id: call-3 ") {
				t.Errorf("bad_audio text:\n%s", text)
			}
			if _, err := s.GetPrompt(ctx, &sdk.GetPromptParams{Name: "site_under_attack", Arguments: map[string]string{"call_id": "x"}}); err == nil {
				t.Error("site_under_attack took an argument it does not have")
			}
			s, _ = cn.connect(t, newLiveBox(t), sdk.NewClient(&sdk.Implementation{Name: "prompt-test", Version: "1"}, nil), bundleDefs(t, "sip")...)
			if text := promptText(t, s, "site_failing_calls", nil); strings.Contains(text, "sip_security_findings") || !strings.Contains(text, "no security tools loaded") {
				t.Errorf("site_failing_calls without sip_forensics:\n%s", text)
			}
			s, _ = cn.connect(t, newLiveBox(t), sdk.NewClient(&sdk.Implementation{Name: "prompt-test", Version: "1"}, nil), bundleDefs(t, "sip", "sip_forensics")...)
			if text := promptText(t, s, "site_under_attack", nil); strings.Contains(text, "generate_fail2ban_rule") || !strings.Contains(text, "no tool loaded here writes a ban rule") {
				t.Errorf("site_under_attack without sip_site:\n%s", text)
			}
			s, _ = cn.connect(t, newLiveBox(t), sdk.NewClient(&sdk.Implementation{Name: "prompt-test", Version: "1"}, nil), bundleDefs(t, "j1939", bundleTransmit)...)
			if text := promptText(t, s, "truck_fault_triage", nil); !strings.Contains(text, "4. If no freeze frame was seen, plan (dry run, the default) j1939_request") {
				t.Errorf("truck triage with transmit:\n%s", text)
			}
		})
	}
}

func promptText(t *testing.T, s *sdk.ClientSession, name string, args map[string]string) string {
	t.Helper()
	res, err := s.GetPrompt(context.Background(), &sdk.GetPromptParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if len(res.Messages) != 1 {
		t.Fatalf("%s: %d messages", name, len(res.Messages))
	}
	return res.Messages[0].Content.(*sdk.TextContent).Text
}
