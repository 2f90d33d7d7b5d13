package mcp

import (
	"context"
	"strings"
	"testing"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
)

// BenchmarkAggregateDialogs100k is the site-wide SIP tools in process
// over benchStore's 100,000 dialogs (issue #39): the handler the
// registry builds, without a transport. aggregate_dialogs and
// group_dialogs by the dimension the end-to-end benchmark asks for and
// by the costliest ones to key; find_problems' first page.
func BenchmarkAggregateDialogs100k(b *testing.B) {
	d := testDeps()
	d.SIP = benchStore(b)
	type call struct {
		name string
		args map[string]any
	}
	var calls []call
	for _, tool := range []string{"aggregate_dialogs", "group_dialogs"} {
		for _, dim := range []string{"final_code", "from_user", "participant_ip"} {
			calls = append(calls, call{tool + "/" + dim, map[string]any{"dimension": dim}})
		}
	}
	calls = append(calls, call{"find_problems", map[string]any{}})
	handlers := map[string]func(context.Context, mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error){
		"aggregate_dialogs": aggregateDialogs.handler(d, aggregateDialogs.info(), DefaultMaxResponseBytes),
		"group_dialogs":     groupDialogs.handler(d, groupDialogs.info(), DefaultMaxResponseBytes),
		"find_problems":     findProblems.handler(d, findProblems.info(), DefaultMaxResponseBytes),
	}
	for _, c := range calls {
		tool, _, _ := strings.Cut(c.name, "/")
		b.Run(c.name, func(b *testing.B) {
			var req mcpgo.CallToolRequest
			req.Params.Name, req.Params.Arguments = tool, c.args
			b.ReportAllocs()
			defer reportCPU(b)()
			for b.Loop() {
				res, err := handlers[tool](context.Background(), req)
				if err != nil || res.IsError {
					b.Fatal(err, res)
				}
			}
		})
	}
}
