package main

import (
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestJ1708ToolsOnTheSimBoard calls every j1708 tool on the real daemon's
// sim board, whose J1708 port capture_status names j1708: each answers,
// its rows name that port, and an unknown port is refused with the list.
func TestJ1708ToolsOnTheSimBoard(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*giveUp)
	defer cancel()
	cmd := exec.Command(binary, "--mcp-transport", "stdio", "--mcp-bundles", "server,j1708")
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	s, err := newClient().Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v\nstderr:\n%s", err, stderr.String())
	}
	defer s.Close()
	waitAllCounting(t, ctx, s, "j1708")
	call := func(tool string, args map[string]any) (map[string]any, bool) {
		t.Helper()
		res, err := s.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		var env map[string]any
		if err := json.Unmarshal([]byte(res.Content[0].(*sdk.TextContent).Text), &env); err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		return env, res.IsError
	}
	for _, tool := range []string{"j1708_messages", "j1587_summary", "j1587_parameters", "j1587_faults", "export_j1708log"} {
		for _, port := range []string{"", "j1708"} {
			env, isErr := call(tool, map[string]any{"port": port})
			if isErr {
				t.Fatalf("%s port %q: %v\n%s", tool, port, env["errors"], stderr.String())
			}
			var rows []any
			if data, isObj := env["data"].(map[string]any); isObj {
				rows = data["ports"].([]any)
			} else {
				rows = env["items"].([]any)
			}
			if tool != "j1587_faults" && len(rows) == 0 {
				t.Errorf("%s port %q: no rows: %v", tool, port, env)
			}
			for _, r := range rows {
				if p := r.(map[string]any)["port"]; p != "j1708" {
					t.Errorf("%s: a row names port %v", tool, p)
				}
			}
		}
		env, isErr := call(tool, map[string]any{"port": "can0"})
		if !isErr || !strings.Contains(errorsOf(env), `no J1708 port \"can0\"; J1708 ports are: j1708`) {
			t.Errorf("%s port can0: %v", tool, env)
		}
	}
}

func errorsOf(env map[string]any) string {
	b, _ := json.Marshal(env["errors"])
	return string(b)
}
