package mcp

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"fieldtap/mcp/audit"
	"fieldtap/mcp/auth"
)

func TestAuditRecordsEveryCall(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	a, err := audit.Open(path, audit.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	s, err := NewServer(fullDeps(t), Options{Audit: a})
	if err != nil {
		t.Fatal(err)
	}
	callTool(t, s, toolCaptureStatus, map[string]any{})
	callTool(t, s, toolCaptureStatus, map[string]any{"bogus": "x\n\"}"})
	req, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": map[string]any{"name": "no_such_tool"}})
	s.HandleMessage(context.Background(), req)

	recs := readAudit(t, path)
	want := []struct{ tool, outcome, err string }{
		{toolCaptureStatus, audit.OutcomeOK, ""},
		{toolCaptureStatus, audit.OutcomeToolError, CodeInvalidArgument},
		{"no_such_tool", audit.OutcomeRefused, "not found"},
	}
	if len(recs) != len(want) {
		t.Fatalf("%d records, want %d", len(recs), len(want))
	}
	for i, w := range want {
		r := recs[i]
		if r.Tool != w.tool || r.Outcome != w.outcome || r.Seq != uint64(i+1) || r.Caller.Transport != "stdio" || r.ID == "" {
			t.Errorf("record %d = %+v, want tool %s outcome %s", i, r, w.tool, w.outcome)
		}
		if (w.err == "") != (r.Error == nil) || (r.Error != nil && !strings.Contains(*r.Error, w.err)) {
			t.Errorf("record %d error = %v, want %q", i, r.Error, w.err)
		}
	}
	if recs[0].ID != "1" || recs[2].ID != "9" {
		t.Errorf("JSON-RPC ids recorded as %q, %q", recs[0].ID, recs[2].ID)
	}
	if !strings.Contains(recs[1].Args, `"bogus"`) {
		t.Errorf("args = %q", recs[1].Args)
	}
	// error is present (null) on success, so a reader never tells null from absent.
	b, _ := os.ReadFile(path)
	if !strings.Contains(strings.SplitN(string(b), "\n", 2)[0], `"error":null`) {
		t.Errorf("first record has no explicit null error: %s", b)
	}
}

func TestAuditFailureWithholdsTheAnswer(t *testing.T) {
	a, err := audit.Open(filepath.Join(t.TempDir(), "audit.jsonl"), audit.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewServer(fullDeps(t), Options{Audit: a})
	if err != nil {
		t.Fatal(err)
	}
	a.Close() // every write now fails, as on a full disk
	r, env := callTool(t, s, toolCaptureStatus, map[string]any{})
	if !r.IsError || env["errors"].([]any)[0].(map[string]any)["code"] != CodeAuditFailed || env["data"] != nil {
		t.Errorf("answer leaked without its record: %s", r.Content[0].Text)
	}
}

func TestScopeGatesNonReadOnlyTools(t *testing.T) {
	d := testDeps()
	tools := map[string]mcpgo.Tool{"send": mcpgo.NewTool("send", mcpgo.WithReadOnlyHintAnnotation(false)), "look": mcpgo.NewTool("look", mcpgo.WithToolAnnotation(readOnly()))}
	h := scoped(d, tools)(func(context.Context, mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		return rendered([]byte(`{"ok":true}`), true, ""), nil
	})
	cases := []struct {
		name   string
		caller auth.Caller
		tool   string
		ok     bool
	}{
		{name: "read token reads", caller: auth.Caller{Transport: "http", TokenID: "r", Scopes: []string{auth.ScopeRead}}, tool: "look", ok: true},
		{name: "read token cannot transmit", caller: auth.Caller{Transport: "http", TokenID: "r", Scopes: []string{auth.ScopeRead}}, tool: "send", ok: false},
		{name: "transmit token transmits", caller: auth.Caller{Transport: "http", TokenID: "w", Scopes: []string{auth.ScopeRead, auth.ScopeTransmit}}, tool: "send", ok: true},
		{name: "stdio has no token scheme", caller: auth.Caller{Transport: "stdio"}, tool: "send", ok: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := mcpgo.CallToolRequest{}
			req.Params.Name = tc.tool
			res, _ := h(auth.WithCaller(context.Background(), tc.caller), req)
			if res.IsError == tc.ok {
				t.Errorf("isError=%v: %s", res.IsError, res.RawStructuredContent)
			}
			if out, _ := outcomeOf(res, nil); !tc.ok && out != audit.OutcomeRefused {
				t.Errorf("a scope refusal is audited as %s", out)
			}
		})
	}
}

func TestStrictInputCollapsesUnions(t *testing.T) {
	got, err := strictInput(json.RawMessage(`{"type":"object","properties":{"sa":{"type":["null","integer"]},"x":{"type":"array","items":{"type":["string","null"]}}}}`))
	if err != nil || strings.Contains(string(got), `"type":[`) || !strings.Contains(string(got), `"sa":{"type":"integer"}`) {
		t.Errorf("strictInput = %s, %v", got, err)
	}
	if _, err := strictInput(json.RawMessage(`{"type":["string","integer"]}`)); err == nil {
		t.Error("a union of two real types was accepted")
	}
}

// TestAuditFailurePolicy: with the file unwritable, a call that did work
// is withheld (AUDIT_FAILED) but a refusal is still answered as itself.
func TestAuditFailurePolicy(t *testing.T) {
	a, err := audit.Open(filepath.Join(t.TempDir(), "audit.jsonl"), audit.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	a.Close() // every record now fails, as on a dead disk
	d := testDeps()
	mw := audited(d, a, nil)
	refuse := mw(func(context.Context, mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		return fail(SourceInfo{}, CodeForbidden, "needs the transmit scope", "use another token"), nil
	})
	work := mw(func(context.Context, mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		return rendered([]byte(`{"ok":true}`), true, ""), nil
	})
	code := func(res *mcpgo.CallToolResult) string {
		var f Failure
		json.Unmarshal(res.RawStructuredContent, &f)
		if len(f.Errors) == 0 {
			return ""
		}
		return f.Errors[0].Code
	}
	res, _ := refuse(context.Background(), mcpgo.CallToolRequest{})
	if got := code(res); got != CodeForbidden {
		t.Errorf("refusal answered %s, want %s", got, CodeForbidden)
	}
	res, _ = work(context.Background(), mcpgo.CallToolRequest{})
	if got := code(res); got != CodeAuditFailed {
		t.Errorf("a call that did work answered %q, want %s", got, CodeAuditFailed)
	}
}

// TestAuditRecordsCancelledCalls: a call whose context ended before it
// returned is recorded cancelled, whatever it answered.
func TestAuditRecordsCancelledCalls(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	a, err := audit.Open(path, audit.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	h := audited(testDeps(), a, nil)(func(ctx context.Context, _ mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		cancel()
		<-ctx.Done()
		return rendered([]byte(`{"ok":true}`), true, ""), nil
	})
	h(ctx, mcpgo.CallToolRequest{})
	a.Close()
	if recs := readAudit(t, path); len(recs) != 1 || recs[0].Outcome != audit.OutcomeCancelled || recs[0].Error == nil {
		t.Errorf("records %+v, want one cancelled", recs)
	}
	if err := a.Record("x", "1", auth.Caller{Transport: "http"}, audit.OutcomeOK, 0, nil, ""); err == nil {
		t.Error("a record after Close succeeded")
	}
}

func readAudit(t *testing.T, path string) []audit.Record {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []audit.Record
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if line == "" {
			continue
		}
		var r audit.Record
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("audit line %q: %v", line, err)
		}
		out = append(out, r)
	}
	return out
}
