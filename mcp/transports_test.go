package mcp

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"fieldtap/mcp/front"
)

// TestHTTPAnswersAreTheStdioAnswers: over the real HTTP endpoint, with the
// go-sdk client in both protocol eras, every answer reads as the same
// call's answer over stdio, and a call that sends progress (the answer
// then rides in an SSE event) arrives whole.
func TestHTTPAnswersAreTheStdioAnswers(t *testing.T) {
	srv, err := NewServer(sipTestDeps(t), Options{Bundles: []string{"server", "sip"}})
	if err != nil {
		t.Fatal(err)
	}
	e := front.NewHTTPEndpoint(srv, front.HTTPOptions{Log: testDeps().Log})
	ts := httptest.NewServer(e)
	t.Cleanup(func() { ts.Close(); e.Close(context.Background()) })
	ctx := context.Background()
	stdio, _ := progressSession(t, srv)
	calls := []*sdk.CallToolParams{
		{Name: "list_dialogs", Arguments: map[string]any{}},
		{Name: "list_dialogs", Arguments: map[string]any{"limit": 1, "fields": []string{"call_id"}}},
		{Name: "get_dialog", Arguments: map[string]any{"call_id": "no-such-call"}},
		{Name: "render_ladder", Arguments: map[string]any{"call_id": "no-such-call"}},
		{Name: "find_problems", Arguments: map[string]any{}},
	}
	for _, version := range []string{"", legacyProtocol} {
		var heard int
		client := sdk.NewClient(&sdk.Implementation{Name: "splice-test", Version: "1"}, &sdk.ClientOptions{
			ProgressNotificationHandler: func(context.Context, *sdk.ProgressNotificationClientRequest) { heard++ },
		})
		s, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: ts.URL + "/mcp"}, &sdk.ClientSessionOptions{ProtocolVersion: version})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		for _, c := range calls {
			want, err := stdio.CallTool(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			got, err := s.CallTool(ctx, c)
			if err != nil {
				t.Fatalf("era %q: %s over HTTP: %v", version, c.Name, err)
			}
			if w, g := want.Content[0].(*sdk.TextContent).Text, got.Content[0].(*sdk.TextContent).Text; g != w || got.IsError != want.IsError {
				t.Errorf("era %q: %s %v over HTTP reads\n%.400s\nover stdio\n%.400s", version, c.Name, c.Arguments, g, w)
			}
		}
		wait := &sdk.CallToolParams{Name: "await_condition", Arguments: map[string]any{"filter": `final_code == 699`, "timeout_seconds": 2}, Meta: sdk.Meta{"progressToken": "w"}}
		res, err := s.CallTool(ctx, wait)
		if err != nil || res.IsError {
			t.Fatalf("era %q: await over HTTP: %v %v", version, err, res)
		}
		var env struct {
			OK bool `json:"ok"`
		}
		if text := res.Content[0].(*sdk.TextContent).Text; json.Unmarshal([]byte(text), &env) != nil || !env.OK || strings.Contains(text, "fieldtap-answer-") {
			t.Errorf("era %q: await's answer after progress: %.300s", version, text)
		}
		if heard == 0 {
			t.Errorf("era %q: no progress heard, so the SSE form was not tried", version)
		}
	}
}
