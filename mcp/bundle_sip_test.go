package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"fieldtap/services/sip"
)

func sipTestDeps(t *testing.T) Deps {
	t.Helper()
	st, _ := sip.New(sip.Limits{})
	add := func(at int, raw string) {
		var m sip.Parsed
		if err := m.Parse([]byte(raw)); err != nil {
			t.Fatal(err)
		}
		st.Add(sip.Meta{Time: time.Unix(1000, 0).Add(time.Duration(at) * time.Millisecond),
			Src: netip.MustParseAddrPort("192.0.2.1:5060"), Dst: netip.MustParseAddrPort("192.0.2.2:5060"), Transport: "udp"}, &m, []byte(raw))
	}
	msg := func(start, callID string, cseq int, method string) string {
		return fmt.Sprintf("%s\r\nVia: SIP/2.0/UDP h;branch=z9hG4bK%s%d\r\nFrom: \"Al\" <sip:1001@h>;tag=1\r\nTo: <sip:2002@h>;tag=2\r\nCall-ID: %s\r\nCSeq: %d %s\r\nUser-Agent: ua-%s\r\nContent-Length: 0\r\n\r\n",
			start, callID, cseq, callID, cseq, method, callID)
	}
	for i := range 5 {
		id := fmt.Sprintf("call-%d", i)
		add(i*10, msg("INVITE sip:2002@h SIP/2.0", id, 1, "INVITE"))
		add(i*10+1, msg("SIP/2.0 180 Ringing", id, 1, "INVITE"))
		code := "200 OK"
		if i%2 == 1 {
			code = "486 Busy Here"
		}
		add(i*10+2, msg("SIP/2.0 "+code, id, 1, "INVITE"))
	}
	d := testDeps()
	d.SIP = st
	return d
}

func callSIP(t *testing.T, d Deps, name string, args map[string]any) (map[string]any, bool) {
	t.Helper()
	for _, tool := range sipTools(d) {
		if tool.Tool.Name != name {
			continue
		}
		var req mcpgo.CallToolRequest
		req.Params.Name, req.Params.Arguments = name, args
		res, err := tool.Handler(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		var out map[string]any
		if err := json.Unmarshal(res.RawStructuredContent, &out); err != nil {
			t.Fatal(err)
		}
		return out, !res.IsError
	}
	t.Fatalf("no tool %s", name)
	return nil, false
}

func TestListDialogsPages(t *testing.T) {
	d := sipTestDeps(t)
	seen := map[string]bool{}
	cursor := ""
	for range 10 {
		args := map[string]any{"limit": 2}
		if cursor != "" {
			args["cursor"] = cursor
		}
		out, ok := callSIP(t, d, toolListDialogs, args)
		if !ok {
			t.Fatalf("failed: %v", out)
		}
		for _, it := range out["items"].([]any) {
			id := it.(map[string]any)["call_id"].(string)
			if seen[id] {
				t.Errorf("%s served twice", id)
			}
			seen[id] = true
		}
		page := out["page"].(map[string]any)
		if page["total_matched"].(float64) != 5 {
			t.Errorf("total_matched %v", page["total_matched"])
		}
		cursor = page["next_cursor"].(string)
		if cursor == "" {
			break
		}
	}
	if len(seen) != 5 {
		t.Errorf("saw %d dialogs, want 5", len(seen))
	}
}

func TestSIPTools(t *testing.T) {
	d := sipTestDeps(t)
	tests := []struct {
		name  string
		tool  string
		args  map[string]any
		ok    bool
		check func(t *testing.T, out map[string]any)
	}{
		{name: "filter", tool: toolListDialogs, args: map[string]any{"filter": "final_code >= 400 and from_user ~ \"^10\""}, ok: true,
			check: func(t *testing.T, out map[string]any) {
				if n := out["page"].(map[string]any)["total_matched"].(float64); n != 2 {
					t.Errorf("matched %v, want 2 busy calls", n)
				}
			}},
		{name: "bad filter points at column", tool: toolListDialogs, args: map[string]any{"filter": "final_code >= x"}, ok: false},
		{name: "bad cursor", tool: toolListDialogs, args: map[string]any{"cursor": "bm9wZQ"}, ok: false},
		{name: "limit over max", tool: toolListDialogs, args: map[string]any{"limit": 1001}, ok: false},
		{name: "get_dialog", tool: toolGetDialog, args: map[string]any{"call_id": "call-1"}, ok: true,
			check: func(t *testing.T, out map[string]any) {
				data := out["data"].(map[string]any)
				if n := len(data["messages"].([]any)); n != 3 {
					t.Errorf("messages %d", n)
				}
				if s := data["dialog"].(map[string]any)["state"]; s != "failed" {
					t.Errorf("state %v", s)
				}
			}},
		{name: "get_dialog unknown", tool: toolGetDialog, args: map[string]any{"call_id": "nope"}, ok: false},
		{name: "get_message", tool: toolGetMessage, args: map[string]any{"call_id": "call-0", "index": 0}, ok: true,
			check: func(t *testing.T, out map[string]any) {
				data := out["data"].(map[string]any)
				if unfenced(data["start_line"]) != "INVITE sip:2002@h SIP/2.0" || len(data["headers"].([]any)) != 7 {
					t.Errorf("message %v", data)
				}
			}},
		{name: "get_message index out of range", tool: toolGetMessage, args: map[string]any{"call_id": "call-0", "index": 3}, ok: false},
		{name: "aggregate adds up", tool: toolAggregateDialogs, args: map[string]any{"dimension": "final_code", "limit": 1}, ok: true,
			check: func(t *testing.T, out map[string]any) {
				data := out["data"].(map[string]any)
				b := data["buckets"].([]any)
				sum := data["other_count"].(float64)
				for _, x := range b {
					sum += x.(map[string]any)["count"].(float64)
				}
				if sum != data["total_matched"].(float64) || sum != 5 || len(b) != 1 {
					t.Errorf("buckets %v other %v total %v", b, data["other_count"], data["total_matched"])
				}
			}},
		{name: "aggregate unknown dimension", tool: toolAggregateDialogs, args: map[string]any{"dimension": "colour"}, ok: false},
		{name: "find_problems failed", tool: toolFindProblems, args: map[string]any{"problems": []any{"failed"}}, ok: true,
			check: func(t *testing.T, out map[string]any) {
				if n := len(out["items"].([]any)); n != 2 {
					t.Errorf("rows %d", n)
				}
			}},
		{name: "find_problems unknown alias", tool: toolFindProblems, args: map[string]any{"problems": []any{"reg-flood"}}, ok: false},
		{name: "triage busy", tool: toolTriageCall, args: map[string]any{"call_id": "call-1"}, ok: true,
			check: func(t *testing.T, out map[string]any) {
				data := out["data"].(map[string]any)
				if data["outcome"] != "failed" || unfenced(data["cause"]) != "486 Busy Here" || data["cause_from"] != "status" {
					t.Errorf("triage %v", data)
				}
			}},
		{name: "validate_filter bad", tool: toolValidateFilter, args: map[string]any{"filter": "method = INVITE"}, ok: true,
			check: func(t *testing.T, out map[string]any) {
				data := out["data"].(map[string]any)
				if data["valid"] != false || data["column"].(float64) != 8 {
					t.Errorf("validate %v", data)
				}
			}},
		{name: "report", tool: toolSIPReport, ok: true,
			check: func(t *testing.T, out map[string]any) {
				st := out["data"].(map[string]any)["store"].(map[string]any)
				if st["requests"].(map[string]any)["INVITE"].(float64) != 5 {
					t.Errorf("report %v", st)
				}
			}},
		{name: "unknown argument", tool: toolTriageCall, args: map[string]any{"callid": "x"}, ok: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, ok := callSIP(t, d, tc.tool, tc.args)
			if ok != tc.ok {
				t.Fatalf("ok = %v, want %v: %v", ok, tc.ok, out)
			}
			if tc.check != nil {
				tc.check(t, out)
			}
		})
	}
}

func TestSIPToolsWithoutStore(t *testing.T) {
	out, ok := callSIP(t, testDeps(), toolListDialogs, nil)
	if ok || out["errors"].([]any)[0].(map[string]any)["code"] != codeNoSIPStore {
		t.Errorf("got %v", out)
	}
}
