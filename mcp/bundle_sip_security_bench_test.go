package mcp

import (
	"context"
	"testing"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
)

// BenchmarkSecurityFindings100k is sip_security_findings over the
// 100,000 dialogs of benchStore: the analysis a sip_security rule also
// runs every evaluation (services/rules), so its cost per call is what
// each such rule costs the box every 5 s. live adds a dialog between
// calls, as a live capture does, so every call analyses a new snapshot;
// quiet asks one snapshot again, whose analysis it keeps.
func BenchmarkSecurityFindings100k(b *testing.B) {
	d := testDeps()
	d.SIP = benchStore(b)
	h := securityFindings.handler(d, securityFindings.info(), DefaultMaxResponseBytes)
	var req mcpgo.CallToolRequest
	req.Params.Name, req.Params.Arguments = "sip_security_findings", map[string]any{}
	i := benchDialogs
	for _, live := range []bool{true, false} {
		b.Run(map[bool]string{true: "live", false: "quiet"}[live], func(b *testing.B) {
			b.ReportAllocs()
			defer reportCPU(b)()
			for b.Loop() {
				if live {
					addLiveDialog(b, d.SIP, i)
					i++
				}
				res, err := h(context.Background(), req)
				if err != nil || res.IsError {
					b.Fatal(err, res)
				}
			}
		})
	}
}
