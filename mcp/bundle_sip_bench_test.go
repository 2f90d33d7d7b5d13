package mcp

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"fieldtap/services/sip"
)

// benchDialogs is issue #3's figure: list_dialogs over a store of
// 100,000 dialogs.
const benchDialogs = 100_000

// benchStore fills a store with benchDialogs one-message dialogs: a
// third each 200, 486 and 404, from 500 distinct users.
func benchStore(b *testing.B) *sip.Store {
	b.Helper()
	st, _ := sip.New(sip.Limits{DialogBytes: 1 << 30, MessageBytes: 1 << 30})
	for i := range benchDialogs {
		code := []string{"200 OK", "486 Busy Here", "404 Not Found"}[i%3]
		addSIP(b, st, i, fmt.Sprintf("SIP/2.0 %s\r\nVia: SIP/2.0/UDP h;branch=z9hG4bK%d\r\nFrom: <sip:%d@h>;tag=1\r\nTo: <sip:2002@h>;tag=2\r\nCall-ID: bench-%d\r\nCSeq: 1 INVITE\r\nContent-Length: 0\r\n\r\n",
			code, i, 1000+i%500, i))
	}
	return st
}

// addLiveDialog adds dialog i past benchStore's, one OPTIONS, as a live
// capture changes the store between calls.
func addLiveDialog(b *testing.B, st *sip.Store, i int) {
	addSIP(b, st, i, fmt.Sprintf("OPTIONS sip:h SIP/2.0\r\nVia: SIP/2.0/UDP h;branch=z9hG4bKl%d\r\nFrom: <sip:9@h>;tag=1\r\nTo: <sip:9@h>\r\nCall-ID: live-%d\r\nCSeq: 1 OPTIONS\r\nContent-Length: 0\r\n\r\n", i, i))
}

// listDialogsCases are the old benchmark's cases (page 50, as its
// default was) and the new default page.
func listDialogsCases(d Deps) []struct {
	name string
	args map[string]any
} {
	sn := d.SIP.Snapshot()
	return []struct {
		name string
		args map[string]any
	}{
		{name: "first_page", args: map[string]any{"limit": 50}},
		{name: "default_page", args: map[string]any{}},
		{name: "regex_filter_page50", args: map[string]any{"filter": `final_code >= 400 and from_user ~ "^14"`, "limit": 50}},
		// The same dialogs, the filter also naming a field the snapshot's
		// columns lack: every dialog is read, as every filter was before
		// the columns.
		{name: "regex_filter_page50_dialogs", args: map[string]any{"filter": `final_code >= 400 and from_user ~ "^14" and call_id != ""`, "limit": 50}},
		{name: "regex_filter_page1000", args: map[string]any{"filter": `final_code >= 400 and from_user ~ "^14"`, "limit": 1000}},
		{name: "last_page_cursor", args: map[string]any{"limit": 50, "cursor": encodeCursor("list_dialogs", "test", key1(sn.Dialogs[len(sn.Dialogs)-50].ID))}},
		{name: "page1000", args: map[string]any{"limit": 1000}},
		{name: "fields_page1000", args: map[string]any{"limit": 1000, "fields": []any{"state", "final_code"}}},
	}
}

// BenchmarkListDialogs100k is list_dialogs in process: the handler the
// registry builds (argument check, run, envelope, projection, rounding,
// budget), without a transport.
func BenchmarkListDialogs100k(b *testing.B) {
	d := testDeps()
	d.SIP = benchStore(b)
	handler := listDialogs.handler(d, listDialogs.info(), DefaultMaxResponseBytes)
	for _, bc := range listDialogsCases(d) {
		b.Run(bc.name, func(b *testing.B) { benchCalls(b, handler, "list_dialogs", bc.args) })
	}
}

// benchCalls calls tool through handler with args for each op, with
// allocations and process CPU.
func benchCalls(b *testing.B, handler server.ToolHandlerFunc, tool string, args map[string]any) {
	var req mcpgo.CallToolRequest
	req.Params.Name, req.Params.Arguments = tool, args
	b.ReportAllocs()
	defer reportCPU(b)()
	for b.Loop() {
		res, err := handler(context.Background(), req)
		if err != nil || res.IsError {
			b.Fatal(err, res)
		}
	}
}

// BenchmarkListDialogs100kLive is the filtered page on a store that
// changes between calls, as during a live capture: each call reads a new
// snapshot, so no filter columns built for an earlier one serve it.
func BenchmarkListDialogs100kLive(b *testing.B) {
	d := testDeps()
	d.SIP = benchStore(b)
	handler := listDialogs.handler(d, listDialogs.info(), DefaultMaxResponseBytes)
	for _, bc := range []struct{ name, filter string }{
		{"columned", `final_code >= 400 and from_user ~ "^14"`},
		{"dialogs", `final_code >= 400 and from_user ~ "^14" and call_id != ""`}, // a field the columns lack
	} {
		b.Run(bc.name, func(b *testing.B) {
			var req mcpgo.CallToolRequest
			req.Params.Name = "list_dialogs"
			req.Params.Arguments = map[string]any{"filter": bc.filter, "limit": 50}
			b.ReportAllocs()
			defer reportCPU(b)()
			i := benchDialogs
			for b.Loop() {
				addLiveDialog(b, d.SIP, i)
				i++
				res, err := handler(context.Background(), req)
				if err != nil || res.IsError {
					b.Fatal(err, res)
				}
			}
		})
	}
}

// BenchmarkListDialogs100kServer adds the JSON-RPC request and response
// through the MCP server in process (HandleMessage), with every
// middleware: what a transport hands the server.
func BenchmarkListDialogs100kServer(b *testing.B) {
	d := testDeps()
	d.SIP = benchStore(b)
	s := build(d, Options{MaxResponseBytes: DefaultMaxResponseBytes}, []toolDef{listDialogs}, false)
	for _, bc := range listDialogsCases(d) {
		b.Run(bc.name, func(b *testing.B) {
			msg, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": map[string]any{"name": "list_dialogs", "arguments": bc.args}})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			defer reportCPU(b)()
			for b.Loop() {
				if out := s.HandleMessage(context.Background(), msg); out == nil {
					b.Fatal("no answer")
				}
			}
		})
	}
}

// reportCPU starts measuring the process's CPU time; the function it
// returns reports it per op (GC workers included) as cpu-ns/op.
func reportCPU(b *testing.B) func() {
	start, ok := processCPU()
	return func() {
		if end, _ := processCPU(); ok && b.N > 0 {
			b.ReportMetric(float64(end-start)/float64(b.N), "cpu-ns/op")
		}
	}
}

// BenchmarkSearchMessages100k is search_messages over benchStore's
// 100,000 messages (about 22 MiB, inside one call's scan): plain text
// that most messages hold, that none does, the same with case, and RE2
// patterns, run on the lines of the messages holding their literal
// prefix: every message, and a thousandth.
func BenchmarkSearchMessages100k(b *testing.B) {
	d := testDeps()
	d.SIP = benchStore(b)
	handler := searchMessages.handler(d, searchMessages.info(), DefaultMaxResponseBytes)
	for _, bc := range []struct {
		name string
		args map[string]any
	}{
		{"text_in_most", map[string]any{"query": "busy here"}},
		{"text_in_none", map[string]any{"query": "user-agent"}},
		{"text_case_sensitive", map[string]any{"query": "Busy Here", "case_sensitive": true}},
		{"regex", map[string]any{"query": "^CSeq: 1 INV", "regex": true}},
		{"regex_selective", map[string]any{"query": "^Call-ID: bench-99[0-9]$", "regex": true}},
	} {
		b.Run(bc.name, func(b *testing.B) { benchCalls(b, handler, "search_messages", bc.args) })
	}
}

// BenchmarkSiteSeries100k is the site-wide answers that read every
// dialog at each call: timeline's buckets, what_happened's events around
// the newest (every dialog's failure read), tail_dialogs' first page (the
// newest of every match), search_by_time's (the oldest of every
// message), describe_endpoint of the address in every dialog and
// compare_captures, both sides every dialog and the store's two halves
// (counted from the snapshot's columns once built).
func BenchmarkSiteSeries100k(b *testing.B) {
	d := fullDeps(b)
	d.SIP = benchStore(b)
	half := time.Unix(1000, 0).Add(benchDialogs / 2 * time.Millisecond).UTC().Format(time.RFC3339Nano) // addSIP's times
	for _, bc := range []struct {
		t    toolDef
		args map[string]any
		name string // the tool's when empty
	}{
		{timelineTool, map[string]any{}, ""},
		{whatHappened, map[string]any{}, ""},
		{tailDialogs, map[string]any{}, ""},
		{searchByTime, map[string]any{}, ""},
		{describeEndpoint, map[string]any{"ip": "192.0.2.1"}, ""},
		{compareCaptures, map[string]any{}, ""},
		{compareCaptures, map[string]any{"until_a": half, "since_b": half}, "compare_captures_halves"},
	} {
		name := cmp.Or(bc.name, bc.t.toolName())
		b.Run(name, func(b *testing.B) {
			benchCalls(b, bc.t.handler(d, bc.t.info(), DefaultMaxResponseBytes), name, bc.args)
		})
	}
}
