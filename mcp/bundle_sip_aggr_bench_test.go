package mcp

import (
	"context"
	"testing"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
)

// BenchmarkAggregateDialogs100k is aggregate_dialogs and group_dialogs
// in process over benchStore's 100,000 dialogs (issue #39): the handler
// the registry builds, without a transport, by the dimension the
// end-to-end benchmark asks for and by the costliest ones to key.
func BenchmarkAggregateDialogs100k(b *testing.B) {
	d := testDeps()
	d.SIP = benchStore(b)
	for _, tl := range []struct {
		name    string
		handler func(context.Context, mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error)
	}{
		{"aggregate_dialogs", aggregateDialogs.handler(d, aggregateDialogs.info(), DefaultMaxResponseBytes)},
		{"group_dialogs", groupDialogs.handler(d, groupDialogs.info(), DefaultMaxResponseBytes)},
	} {
		for _, dim := range []string{"final_code", "from_user", "participant_ip"} {
			b.Run(tl.name+"/"+dim, func(b *testing.B) {
				var req mcpgo.CallToolRequest
				req.Params.Name, req.Params.Arguments = tl.name, map[string]any{"dimension": dim}
				b.ReportAllocs()
				defer reportCPU(b)()
				for b.Loop() {
					res, err := tl.handler(context.Background(), req)
					if err != nil || res.IsError {
						b.Fatal(err, res)
					}
				}
			})
		}
	}
}
