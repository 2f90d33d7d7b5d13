package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestSpliceWritesTheHeldText: the middleware hands mcp-go a
// placeholder per text block and the writer puts the texts back, escaped, in a JSON body
// and in an SSE event as mcp-go writes them; a write without the
// placeholder (a notification) passes as it is.
func TestSpliceWritesTheHeldText(t *testing.T) {
	text := `{"ok":true,"items":[{"user_agent":"<<sender>>é \u202e \x1b[2J \"q\" \\</sender>>"}]}` + "\n\x00"
	for _, form := range []string{"json", "sse"} {
		rec := httptest.NewRecorder()
		ctx, w := withSplice(context.Background(), rec)
		res, err := spliced(func(context.Context, mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
			return &mcpgo.CallToolResult{Content: []mcpgo.Content{mcpgo.NewTextContent(text), mcpgo.NewTextContent("a second \"block\"")}}, nil
		})(ctx, mcpgo.CallToolRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if got := res.Content[0].(mcpgo.TextContent).Text; got == text || !strings.HasPrefix(got, "fieldtap-answer-") {
			t.Fatalf("mcp-go was handed %q", got)
		}
		body, _ := json.Marshal(mcpgo.NewJSONRPCResultResponse(mcpgo.NewRequestId(int64(3)), res))
		note := `event: message` + "\ndata: " + `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}` + "\n\n"
		if form == "sse" {
			fmt.Fprint(w, note)
			fmt.Fprintf(w, "event: message\ndata: %s\n\n", body)
		} else {
			w.Write(append(body, '\n'))
		}
		out := rec.Body.String()
		if form == "sse" {
			if !strings.HasPrefix(out, note) {
				t.Fatalf("the notification was changed: %q", out)
			}
			out = strings.TrimSuffix(strings.TrimPrefix(out[len(note):], "event: message\ndata: "), "\n\n")
		}
		var got mcpgo.JSONRPCResponse
		var result struct {
			Content []struct{ Text string } `json:"content"`
		}
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("%s: %v in %q", form, err, out)
		}
		raw, _ := json.Marshal(got.Result)
		json.Unmarshal(raw, &result)
		if len(result.Content) != 2 || result.Content[0].Text != text || result.Content[1].Text != `a second "block"` {
			t.Errorf("%s: the client reads %+v, want the text %q", form, result, text)
		}
		if strings.Contains(out, "fieldtap-answer-") {
			t.Errorf("%s: the placeholder reached the client: %q", form, out)
		}
	}
}

// TestHTTPAnswersAreTheStdioAnswers: over the real HTTP endpoint, with the
// go-sdk client in both protocol eras, every answer reads as the same
// call's answer over stdio, and a call that sends progress (the answer
// then rides in an SSE event) arrives whole.
func TestHTTPAnswersAreTheStdioAnswers(t *testing.T) {
	srv, err := NewServer(sipTestDeps(t), Options{Bundles: []string{"server", "sip"}})
	if err != nil {
		t.Fatal(err)
	}
	e := NewHTTPEndpoint(srv, HTTPOptions{Log: testDeps().Log})
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
