package main

// The opt-in vehicle bundles (uds, dbc, j1939_diag, canre, j1587_ref)
// through the real binary and the official go-sdk client: every
// read-only tool's answer validates against its output schema on the
// simulated board, a tool called without its required arguments answers
// INVALID_ARGUMENT, and the sim truck's workshop session reaches uds_trace.

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"fieldtap/tools/gen/j1939gen"
	"fieldtap/tools/refdata"
)

// vehicleBundles loads every vehicle bundle beside the ones they build on.
const vehicleBundles = "server,can,j1939,j1708,uds,dbc,j1939_diag,canre,j1587_ref"

// simEEC1 is the sim engine's EEC1 (PGN 61444 from SA 0), and a DBC for it.
const (
	simEEC1 = "0CF00400"
	eec1DBC = "BO_ 2364540158 EEC1: 8 Vector__XXX\n SG_ EngineSpeed : 24|16@1+ (0.125,0) [0|8031.875] \"rpm\" Vector__XXX\n" +
		"BA_DEF_ BO_ \"VFrameFormat\" ENUM \"StandardCAN\",\"ExtendedCAN\",\"reserved\",\"J1939PG\";\nBA_ \"VFrameFormat\" BO_ 2364540158 3;\n"
)

func TestVehicleBundlesOnTheSimBoard(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	if err := os.Mkdir(data, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(data, "eec1.dbc"), []byte(eec1DBC))
	cfg := writeFile(t, filepath.Join(dir, "fieldtapd.toml"), []byte(fmt.Sprintf("[store]\ndata_dir = %q\n", data)))
	cc := startContract(t, "--config", cfg, "--board", "sim", "--replay-speed", "max", "--mcp-bundles", vehicleBundles)
	cc.waitExhausted()
	for _, tool := range []string{"uds_trace", "uds_services", "dbc_inspect", "dbc_decode_window", "dbc_encode", "j1939_diagnostics",
		"j1939_spn_history", "j1939_compare", "j1939_topology", "can_re_analyse", "can_re_correlate", "j1587_pids", "j2497_mids"} {
		if cc.tools[tool] == nil {
			t.Fatalf("%s not loaded with --mcp-bundles %s", tool, vehicleBundles)
		}
	}
	// What the Inspector loop does first: no arguments at all.
	for _, tool := range []string{"can_re_analyse", "dbc_encode", "j1939_spn_history"} {
		env, _ := cc.call(tool, map[string]any{})
		errs, _ := env["errors"].([]any)
		if env["ok"] != false || len(errs) == 0 || errs[0].(map[string]any)["code"] != "INVALID_ARGUMENT" {
			t.Errorf("%s without its required arguments: %v", tool, env)
		}
	}
	if env, _ := cc.call("dbc_load", map[string]any{"file": "eec1.dbc"}); env["ok"] != true {
		t.Fatalf("dbc_load: %v", env["errors"])
	}
	fixed := map[string]any{"pgn": 61444, "spn": 190, "tool": "capture_status", "query": "sip:", "filter": "", "index": 0,
		"file": "eec1.dbc", "message": "EEC1", "values": []any{map[string]any{"signal": "EngineSpeed", "value": 1500}}, "id": simEEC1}
	if n := cc.everyTool(fixed, func(string, []string) {}); n < 30 {
		t.Errorf("only %d tools answered ok", n)
	}
	env, _ := cc.call("uds_trace", map[string]any{"port": "can0", "status": "negative"})
	pg := env["page"].(map[string]any)
	if n := pg["total_matched"].(float64); n < j1939gen.WorkshopNegative || int(n)%j1939gen.WorkshopNegative != 0 {
		t.Errorf("uds_trace: %v negative transactions, want %d a workshop pass", n, j1939gen.WorkshopNegative)
	}
	env, _ = cc.call("dbc_encode", map[string]any{"message": fixed["message"], "values": fixed["values"]})
	if d, _ := env["data"].(map[string]any); d == nil || d["data"] != "FFFFFFE02EFFFFFF" {
		t.Errorf("dbc_encode EngineSpeed 1500 rpm: %v", env)
	}
}

// The Nissan Leaf's 26 KWP2000 exchanges (services/isotp/testdata/
// uds_count.py) through the binary reading the log as a source.
func TestUDSTraceOnTheNissanLeafLog(t *testing.T) {
	path := refdata.File(t, "can", "css_uds_nissan_leaf_2F6913DB.log")
	cc := startContract(t, "--board", "none", "--source", path, "--mcp-bundles", "server,can,uds")
	cc.waitExhausted()
	env, _ := cc.call("uds_trace", map[string]any{"limit": 1})
	if pg := env["page"].(map[string]any); pg["total_matched"] != 26.0 {
		t.Errorf("uds_trace page %v, want 26 transactions", pg)
	}
}
