package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
)

func decode(t *testing.T, r *mcpgo.CallToolResult) map[string]any {
	t.Helper()
	text := r.Content[0].(mcpgo.TextContent).Text
	if !bytes.Equal([]byte(text), r.RawStructuredContent) {
		t.Errorf("text and structuredContent differ:\n%s\n%s", text, r.RawStructuredContent)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(text), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestEnvelopeShapes(t *testing.T) {
	src := SourceInfo{CaptureIdentity: "x"}
	okRes := ok(src, map[string]int{"a": 1})
	if okRes.IsError {
		t.Error("ok answer marked isError")
	}
	m := decode(t, okRes)
	if m["ok"] != true || m["data"] == nil || m["warnings"] == nil || m["errors"] == nil {
		t.Errorf("ok envelope = %v", m)
	}

	l := decode(t, list[int](src, nil, Page{}))
	if items, isList := l["items"].([]any); !isList || len(items) != 0 || l["page"] == nil {
		t.Errorf("empty list must carry items: [] and a page: %v", l)
	}

	f := fail(src, CodeInvalidArgument, "bad", "fix it")
	if !f.IsError {
		t.Error("fail answer not marked isError")
	}
	fm := decode(t, f)
	errs := fm["errors"].([]any)
	if fm["ok"] != false || len(errs) != 1 || errs[0].(map[string]any)["code"] != CodeInvalidArgument {
		t.Errorf("fail envelope = %v", fm)
	}
}

func TestRecoveryTurnsPanicsAndErrorsIntoEnvelopes(t *testing.T) {
	d := testDeps()
	mw := recovery(d)
	panicky := mw(func(context.Context, mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) { panic("boom") })
	res, err := panicky(context.Background(), mcpgo.CallToolRequest{})
	if err != nil || res == nil || !res.IsError {
		t.Fatalf("panic became res=%v err=%v, want an isError envelope", res, err)
	}
	erring := mw(func(context.Context, mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		return nil, context.DeadlineExceeded
	})
	res, err = erring(context.Background(), mcpgo.CallToolRequest{})
	if err != nil || !res.IsError {
		t.Fatalf("error became res=%v err=%v", res, err)
	}
}

func TestHandlerRefusesUnknownArguments(t *testing.T) {
	h := handler(testDeps(), func(context.Context, noArgs) *mcpgo.CallToolResult { return ok(SourceInfo{}, 1) })
	req := mcpgo.CallToolRequest{}
	req.Params.Arguments = map[string]any{"bogus": true}
	res, _ := h(context.Background(), req)
	if !res.IsError || !bytes.Contains(res.RawStructuredContent, []byte("bogus")) {
		t.Errorf("unknown argument answer = %s", res.RawStructuredContent)
	}
}
