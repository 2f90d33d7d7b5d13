package mcp

import (
	"context"
	"fmt"
	"testing"

	"fieldtap/mcp/audit"
)

// TestCallsCountedByToolAndOutcome: every tools/call is counted under its
// tool and outcome without an audit file, and names no loaded tool has
// fall under one "unknown" row, so a scan cannot grow the table.
func TestCallsCountedByToolAndOutcome(t *testing.T) {
	counts := audit.NewCallCounts()
	s := build(testDeps(), Options{MaxResponseBytes: DefaultMaxResponseBytes, Counts: counts}, []toolDef{captureStatusTool, serverCapabilities}, false)
	callTool(t, s, "capture_status", nil)
	callTool(t, s, "capture_status", nil)
	callTool(t, s, "server_capabilities", map[string]any{"bogus": 1}) // refused by the argument check
	for i := range 50 {
		req := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"probe_%d"}}`, i+2, i)
		s.HandleMessage(context.Background(), []byte(req)) // -32602: no such tool
	}
	got := fmt.Sprint(counts.Calls())
	want := "[{capture_status ok 2} {server_capabilities tool_error 1} {unknown refused 50}]"
	if got != want {
		t.Errorf("counts %s, want %s", got, want)
	}
}

// TestStructuredContentOnlyWithOutputSchemas: an answer carries its JSON
// once (the text block) unless tools/list advertises the output schemas,
// and then also as structuredContent, the same bytes; the audit sees the
// outcome either way.
func TestStructuredContentOnlyWithOutputSchemas(t *testing.T) {
	for _, schemas := range []bool{false, true} {
		counts := audit.NewCallCounts()
		s := build(testDeps(), Options{MaxResponseBytes: DefaultMaxResponseBytes, OutputSchemas: schemas, Counts: counts}, []toolDef{captureStatusTool, serverCapabilities}, false)
		for _, args := range []map[string]any{nil, {"bogus": 1}} {
			r, _ := callTool(t, s, "server_capabilities", args)
			if got := len(r.StructuredContent) > 0; got != schemas {
				t.Errorf("output schemas %v, args %v: structuredContent sent %v", schemas, args, got)
			}
		}
		if got, want := fmt.Sprint(counts.Calls()), "[{server_capabilities ok 1} {server_capabilities tool_error 1}]"; got != want {
			t.Errorf("output schemas %v: counts %s, want %s", schemas, got, want)
		}
	}
}
