package mcp

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
)

func TestAuditRecordsEveryCall(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	a, err := OpenAudit(path, AuditLimits{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if st, _ := os.Stat(path); st.Mode().Perm() != auditFileMode {
		t.Errorf("audit file mode %v, want %v", st.Mode().Perm(), os.FileMode(auditFileMode))
	}
	s, err := NewServer(testDeps(), Options{Audit: a})
	if err != nil {
		t.Fatal(err)
	}
	callTool(t, s, toolCaptureStatus, map[string]any{})
	callTool(t, s, toolCaptureStatus, map[string]any{"bogus": "x\n\"}"})
	req, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": map[string]any{"name": "no_such_tool"}})
	s.HandleMessage(context.Background(), req)

	recs := readAudit(t, path)
	want := []struct{ tool, outcome, err string }{
		{toolCaptureStatus, OutcomeOK, ""},
		{toolCaptureStatus, OutcomeToolError, CodeInvalidArgument},
		{"no_such_tool", OutcomeRefused, "not found"},
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
	a, err := OpenAudit(filepath.Join(t.TempDir(), "audit.jsonl"), AuditLimits{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewServer(testDeps(), Options{Audit: a})
	if err != nil {
		t.Fatal(err)
	}
	a.Close() // every write now fails, as on a full disk
	r, env := callTool(t, s, toolCaptureStatus, map[string]any{})
	if !r.IsError || env["errors"].([]any)[0].(map[string]any)["code"] != CodeAuditFailed || env["data"] != nil {
		t.Errorf("answer leaked without its record: %s", r.Content[0].Text)
	}
}

func TestOpenAuditFailsOnABadPath(t *testing.T) {
	if _, err := OpenAudit(filepath.Join(t.TempDir(), "no", "such", "dir", "a.jsonl"), AuditLimits{}); err == nil {
		t.Error("an unopenable audit path was accepted")
	}
}

func TestAuditTokenID(t *testing.T) {
	cases := []struct{ in, want string }{
		{in: "ci-runner-1", want: "ci-runner-1"},
		{in: "a b\"c\nd", want: "a%20b%22c%0Ad"},
		{in: strings.Repeat("x", 70), want: strings.Repeat("x", maxAuditTokenID) + auditCutMark},
	}
	for _, tc := range cases {
		if got := auditTokenID(tc.in); got != tc.want {
			t.Errorf("auditTokenID(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestTokensFile(t *testing.T) {
	cases := []struct {
		name string
		file string
		ok   bool
	}{
		{name: "hash line", file: HashToken("a", "s"), ok: true},
		{name: "scopes", file: HashToken("a", "s", ScopeRead, ScopeTransmit), ok: true},
		{name: "plaintext secret refused", file: "a:s3cret", ok: false},
		{name: "short hash", file: "a:sha256:abcd", ok: false},
		{name: "unknown scope", file: HashToken("a", "s", "admin"), ok: false},
		{name: "duplicate id", file: HashToken("a", "s") + "\n" + HashToken("a", "t"), ok: false},
		{name: "empty", file: "# nothing\n", ok: false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseTokens(strings.NewReader(tc.file))
			if (err == nil) != tc.ok {
				t.Errorf("err = %v, want ok=%v", err, tc.ok)
			}
		})
	}
	tok := testTokens(t)
	if got, found := tok.Verify(secretRead); !found || got.ID != "ci reader" || !(Caller{Scopes: got.Scopes}).may(ScopeRead) || (Caller{Scopes: got.Scopes}).may(ScopeTransmit) {
		t.Errorf("Verify(read secret) = %+v %v", got, found)
	}
	if _, found := tok.Verify(secretRead + "x"); found {
		t.Error("a wrong secret verified")
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
		caller Caller
		tool   string
		ok     bool
	}{
		{name: "read token reads", caller: Caller{Transport: "http", TokenID: "r", Scopes: []string{ScopeRead}}, tool: "look", ok: true},
		{name: "read token cannot transmit", caller: Caller{Transport: "http", TokenID: "r", Scopes: []string{ScopeRead}}, tool: "send", ok: false},
		{name: "transmit token transmits", caller: Caller{Transport: "http", TokenID: "w", Scopes: []string{ScopeRead, ScopeTransmit}}, tool: "send", ok: true},
		{name: "stdio has no token scheme", caller: Caller{Transport: "stdio"}, tool: "send", ok: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := mcpgo.CallToolRequest{}
			req.Params.Name = tc.tool
			res, _ := h(withCaller(context.Background(), tc.caller), req)
			if res.IsError == tc.ok {
				t.Errorf("isError=%v: %s", res.IsError, res.RawStructuredContent)
			}
			if out, _ := outcomeOf(res, nil); !tc.ok && out != OutcomeRefused {
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
