package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// rpc sends one JSON-RPC request through the server in-process and
// returns the raw result.
func rpc(t *testing.T, s *server.MCPServer, method string, params any) json.RawMessage {
	t.Helper()
	req, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	if err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(s.HandleMessage(context.Background(), req))
	if err != nil {
		t.Fatal(err)
	}
	var resp struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(out, &resp); err != nil {
		t.Fatal(err)
	}
	if resp.Error != nil {
		t.Fatalf("%s: JSON-RPC error %d %s", method, resp.Error.Code, resp.Error.Message)
	}
	return resp.Result
}

// callResult is a tools/call result as the wire carries it.
type callResult struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	IsError           bool            `json:"isError"`
}

func call(t *testing.T, s *server.MCPServer, tool string, args map[string]any) (callResult, map[string]any) {
	t.Helper()
	var r callResult
	if err := json.Unmarshal(rpc(t, s, "tools/call", map[string]any{"name": tool, "arguments": args}), &r); err != nil {
		t.Fatal(err)
	}
	var env map[string]any
	if err := json.Unmarshal([]byte(r.Content[0].Text), &env); err != nil {
		t.Fatalf("content[0] is not the envelope: %v", err)
	}
	if env["ok"] == r.IsError {
		t.Errorf("%s: ok=%v but isError=%v", tool, env["ok"], r.IsError)
	}
	return r, env
}

// listTool is a list tool over n synthetic rows, for the fields and
// budget tests.
type synthRow struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Pad  string `json:"pad,omitempty"`
}

type synthIn struct {
	Limit int `json:"limit,omitempty"`
	Projection
}

func synthServer(t *testing.T, n, maxBytes int) *server.MCPServer {
	t.Helper()
	d := testDeps()
	s := server.NewMCPServer("t", "1",
		server.WithToolHandlerMiddleware(budget(d, maxBytes, map[string]map[string]bool{"synth": {"limit": true, "fields": true}})),
		server.WithToolHandlerMiddleware(recovery(d)))
	s.AddTool(mcpgo.NewTool("synth", inputSchema[synthIn](), readOnly(), listOutput[synthRow]()),
		listHandler[synthIn, synthRow](d, []string{"id"}, func(_ context.Context, in synthIn) *mcpgo.CallToolResult {
			k := n
			if in.Limit > 0 && in.Limit < n {
				k = in.Limit
			}
			rows := make([]synthRow, k)
			for i := range rows {
				rows[i] = synthRow{ID: fmt.Sprint(i), Name: "row", Pad: strings.Repeat("x", 100)}
			}
			return list(d.Source(), rows, Page{Returned: k, TotalMatched: n, Truncated: k < n})
		}))
	return s
}

func TestFieldsProjection(t *testing.T) {
	s := synthServer(t, 3, DefaultMaxResponseBytes)
	cases := []struct {
		name    string
		fields  []any
		ok      bool
		columns string
	}{
		{name: "all columns by default", fields: nil, ok: true, columns: "id,name,pad"},
		{name: "id always survives", fields: []any{"name"}, ok: true, columns: "id,name"},
		{name: "unknown field is an error", fields: []any{"nmae"}, ok: false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := map[string]any{}
			if tc.fields != nil {
				args["fields"] = tc.fields
			}
			r, env := call(t, s, "synth", args)
			if r.IsError == tc.ok {
				t.Fatalf("isError=%v: %s", r.IsError, r.Content[0].Text)
			}
			if !tc.ok {
				if e := env["errors"].([]any)[0].(map[string]any); !strings.Contains(e["message"].(string), "nmae") || !strings.Contains(e["hint"].(string), "name") {
					t.Errorf("error does not name the field and the columns: %v", e)
				}
				return
			}
			item := env["items"].([]any)[0].(map[string]any)
			var cols []string
			for _, c := range []string{"id", "name", "pad"} {
				if _, has := item[c]; has {
					cols = append(cols, c)
				}
			}
			if got := strings.Join(cols, ","); got != tc.columns || len(item) != len(cols) {
				t.Errorf("columns %v, want %s", item, tc.columns)
			}
			if page := env["page"].(map[string]any); page["total_matched"] != 3.0 {
				t.Errorf("envelope projected away: %v", env)
			}
			if string(r.StructuredContent) != r.Content[0].Text {
				t.Error("structuredContent differs from content[0]")
			}
		})
	}
}

func TestBudgetRefusesWithSizeAndNarrowerRequest(t *testing.T) {
	const budgetBytes = 4096
	s := synthServer(t, 200, budgetBytes)
	r, env := call(t, s, "synth", map[string]any{})
	if !r.IsError {
		t.Fatalf("a %d-row answer passed a %d-byte budget", 200, budgetBytes)
	}
	e := env["errors"].([]any)[0].(map[string]any)
	if e["code"] != CodeResponseTooLarge || e["max_bytes"] != float64(budgetBytes) || e["size_bytes"].(float64) <= budgetBytes {
		t.Fatalf("error = %v", e)
	}
	hint := e["hint"].(string)
	var limit int
	if _, err := fmt.Sscanf(hint[strings.Index(hint, "limit: "):], "limit: %d", &limit); err != nil || limit < 1 {
		t.Fatalf("hint %q names no limit", hint)
	}
	// The suggestion is concrete: following it fits.
	if r, _ := call(t, s, "synth", map[string]any{"limit": limit}); r.IsError {
		t.Errorf("the suggested limit %d still does not fit: %s", limit, r.Content[0].Text)
	}
	if r, _ := call(t, s, "synth", map[string]any{"limit": 5}); r.IsError {
		t.Errorf("a small page was refused: %s", r.Content[0].Text)
	}
}

func TestNewServerRefusesATinyBudget(t *testing.T) {
	if _, err := NewServer(testDeps(), Options{MaxResponseBytes: MinMaxResponseBytes - 1}); err == nil {
		t.Fatal("a budget under the minimum was accepted")
	}
}

func TestDescribeResponseShape(t *testing.T) {
	s, err := NewServer(testDeps(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	r, env := call(t, s, toolDescribeResponseShape, map[string]any{"tool": toolCaptureStatus})
	if r.IsError {
		t.Fatal(r.Content[0].Text)
	}
	data := env["data"].(map[string]any)
	if data["output_schema"].(map[string]any)["type"] != "object" {
		t.Errorf("schema = %v", data["output_schema"])
	}
	ex := data["example"].(map[string]any)
	if ex["ok"] != true || ex["data"] == nil || ex["source"] == nil {
		t.Errorf("example = %v", ex)
	}
	if r, _ := call(t, s, toolDescribeResponseShape, map[string]any{"tool": "nope"}); !r.IsError || !strings.Contains(r.Content[0].Text, toolCaptureStatus) {
		t.Errorf("an unknown tool must fail and list the loaded ones: %s", r.Content[0].Text)
	}
}
