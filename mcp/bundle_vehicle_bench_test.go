package mcp

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"fieldtap/tools/refdata"
)

// BenchmarkVehicleTools is each vehicle tool in process over a reference
// log: the handler the registry builds (argument check, run, envelope,
// rounding, budget), without a transport.
func BenchmarkVehicleTools(b *testing.B) {
	dir := b.TempDir()
	for _, f := range []string{"css_CSS-Electronics-SAE-J1939-DEMO.dbc"} {
		raw, err := os.ReadFile(refdata.File(b, "can", f))
		if err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), raw, 0o600); err != nil {
			b.Fatal(err)
		}
	}
	leaf := vehicleDeps(b, dir, candumpFrames(b, refdata.File(b, "can", "css_uds_nissan_leaf_2F6913DB.log")))
	normal := vehicleDeps(b, dir, candumpFrames(b, refdata.File(b, "can", "j1939atk_normal.log")))
	if _, err := normal.DBC.Load(context.Background(), "", "css_CSS-Electronics-SAE-J1939-DEMO.dbc"); err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		d    Deps
		t    toolDef
		args map[string]any
	}{
		{name: "uds_trace_store_leaf", d: leaf, t: udsTraceTool, args: map[string]any{}},
		{name: "uds_trace_frames_leaf", d: leaf, t: udsTraceTool, args: map[string]any{"from": "frames"}},
		{name: "uds_services_leaf", d: leaf, t: udsServicesTool, args: map[string]any{}},
		{name: "dbc_decode_window_normal", d: normal, t: dbcDecodeWindow, args: map[string]any{}},
		{name: "j1939_topology_normal", d: normal, t: j1939Topology, args: map[string]any{}},
		{name: "j1939_diagnostics_normal", d: normal, t: j1939Diagnostics, args: map[string]any{}},
		{name: "can_re_analyse_etc1", d: normal, t: canREAnalyse, args: map[string]any{"id": "0CF00203"}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			info := bc.t.info()
			handler := bc.t.handler(bc.d, info, DefaultMaxResponseBytes)
			var req mcpgo.CallToolRequest
			req.Params.Name, req.Params.Arguments = info.name, bc.args
			b.ReportAllocs()
			for b.Loop() {
				res, err := handler(context.Background(), req)
				if err != nil || res.IsError {
					b.Fatal(err, res)
				}
			}
		})
	}
}
