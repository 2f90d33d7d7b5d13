package mcp

import (
	"context"
	"fmt"
	"net/netip"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"fieldtap/services/sip"
)

// benchDialogs is issue #3's figure: list_dialogs over a full store.
const benchDialogs = sip.DefaultDialogs

func benchStore(b *testing.B) *sip.Store {
	b.Helper()
	st, _ := sip.New(sip.Limits{DialogBytes: 1 << 30, MessageBytes: 1 << 30})
	var m sip.Parsed
	for i := range benchDialogs {
		code := []string{"200 OK", "486 Busy Here", "404 Not Found"}[i%3]
		raw := fmt.Sprintf("SIP/2.0 %s\r\nVia: SIP/2.0/UDP h;branch=z9hG4bK%d\r\nFrom: <sip:%d@h>;tag=1\r\nTo: <sip:2002@h>;tag=2\r\nCall-ID: bench-%d\r\nCSeq: 1 INVITE\r\nContent-Length: 0\r\n\r\n", code, i, 1000+i%500, i)
		if err := m.Parse([]byte(raw)); err != nil {
			b.Fatal(err)
		}
		st.Add(sip.Meta{Time: time.Unix(1000, 0).Add(time.Duration(i) * time.Millisecond),
			Src: netip.MustParseAddrPort("192.0.2.1:5060"), Dst: netip.MustParseAddrPort("192.0.2.2:5060"), Transport: "udp"}, &m, []byte(raw))
	}
	return st
}

func BenchmarkListDialogs100k(b *testing.B) {
	d := testDeps()
	d.SIP = benchStore(b)
	var tool func(context.Context, mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error)
	for _, t := range sipTools(d) {
		if t.Tool.Name == toolListDialogs {
			tool = t.Handler
		}
	}
	for _, bc := range []struct {
		name string
		args map[string]any
	}{
		{name: "first_page", args: map[string]any{}},
		{name: "regex_filter_page50", args: map[string]any{"filter": `final_code >= 400 and from_user ~ "^14"`}},
		{name: "regex_filter_page1000", args: map[string]any{"filter": `final_code >= 400 and from_user ~ "^14"`, "limit": 1000}},
		{name: "last_page_cursor", args: map[string]any{"limit": 50}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var req mcpgo.CallToolRequest
			req.Params.Name, req.Params.Arguments = toolListDialogs, bc.args
			if bc.name == "last_page_cursor" {
				sn := d.SIP.Snapshot()
				req.Params.Arguments = map[string]any{"limit": 50, "cursor": sipCursor(d.Source(), sn.Dialogs[len(sn.Dialogs)-51])}
			}
			b.ReportAllocs()
			for b.Loop() {
				res, err := tool(context.Background(), req)
				if err != nil || res.IsError {
					b.Fatal(err, res)
				}
			}
		})
	}
}
