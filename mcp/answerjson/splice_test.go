package answerjson

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
)

// TestSpliceWritesTheHeldText: the middleware hands mcp-go a
// placeholder per text block and the writer puts the texts back, escaped, in a JSON body
// and in an SSE event as mcp-go writes them; a write without the
// placeholder (a notification) passes as it is.
func TestSpliceWritesTheHeldText(t *testing.T) {
	text := `{"ok":true,"items":[{"user_agent":"<<sender>>é \u202e \x1b[2J \"q\" \\</sender>>"}]}` + "\n\x00"
	for _, form := range []string{"json", "sse"} {
		rec := httptest.NewRecorder()
		ctx, w := Splice(context.Background(), rec)
		res, err := Spliced(func(context.Context, mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
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
