package main

// The opt-in vehicle bundles (uds, dbc, j1939_diag, canre, j1587_ref)
// through the real binary and the official go-sdk client: every
// read-only tool's answer validates against its output schema on the
// simulated board, a tool called without its required arguments answers
// INVALID_ARGUMENT, and the sim truck's workshop session reaches uds_trace.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode"

	"fieldtap/board/sim/j1939gen"
	"fieldtap/drivers/wire"
	"fieldtap/mcp/untrusted"
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

// hostileVehicleCandump is frames of the hostile DBC's Engine message (id
// 0x100) and a UDS ReadDataByIdentifier F190 on 0x7E0/0x7E8 whose answer
// is the marker, after the tester's flow control.
func hostileVehicleCandump() []byte {
	var out []byte
	t := hostileStart
	line := func(id uint32, data ...byte) {
		out = wire.AppendCandump(out, t, "can0", id, data)
		t = t.Add(10 * time.Millisecond)
	}
	for i := range 10 {
		line(0x100, byte(i%3), byte(i), 0x10, 0, 0, 0, 0, 0)
	}
	answer := append([]byte{0x62, 0xF1, 0x90}, marker...)
	line(0x7E0, 0x03, 0x22, 0xF1, 0x90, 0, 0, 0, 0)
	line(0x7E8, append([]byte{0x10, byte(len(answer))}, answer[:6]...)...)
	line(0x7E0, 0x30, 0, 0, 0, 0, 0, 0, 0)
	for sn, rest := 1, answer[6:]; len(rest) > 0; sn++ {
		n := min(7, len(rest))
		line(0x7E8, append([]byte{0x20 | byte(sn&0xF)}, rest[:n]...)...)
		rest = rest[n:]
	}
	return out
}

// TestVehicleAnswersFenceSenderText: a hostile DBC's names, units, labels
// and comments and an ECU's UDS answer, through every read-only tool of
// the vehicle bundles: the marker appears only inside fences, no control
// or bidi character survives, and a fenced answer ends with the
// provenance note.
func TestVehicleAnswersFenceSenderText(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	if err := os.Mkdir(data, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(data, "hostile.dbc"), hostileDBC())
	cfg := writeFile(t, filepath.Join(dir, "fieldtapd.toml"), []byte(fmt.Sprintf("board = \"none\"\n[store]\ndata_dir = %q\n", data)))
	cc := startContract(t, "--config", cfg, "--source", writeFile(t, filepath.Join(dir, "hostile.log"), hostileVehicleCandump()),
		"--mcp-bundles", "server,can,uds,dbc,j1939_diag,canre,j1587_ref")
	cc.waitExhausted()
	if env, _ := cc.call("dbc_load", map[string]any{"file": "hostile.dbc"}); env["ok"] != true {
		t.Fatalf("dbc_load: %v", env["errors"])
	}
	fencedTools := map[string]bool{}
	fixed := map[string]any{"spn": 190, "file": "hostile.dbc", "message": "Engine", "id": "100",
		"values": []any{map[string]any{"signal": "Gear", "value": 1}}}
	cc.everyTool(fixed, func(tool string, blocks []string) {
		body := blocks[0]
		for i := strings.Index(body, marker); i >= 0; i = nextIndex(body, marker, i) {
			open, closed := strings.LastIndex(body[:i], untrusted.Open), strings.LastIndex(body[:i], untrusted.Close)
			if open < 0 || closed > open || !strings.Contains(body[i:], untrusted.Close) {
				t.Errorf("%s: sender text outside a fence at byte %d: %.200s", tool, i, body[max(0, i-100):])
			}
		}
		var v any
		_ = json.Unmarshal([]byte(body), &v)
		eachString(v, func(s string) {
			for _, r := range s {
				if r != '\n' && r != '\t' && (unicode.IsControl(r) || untrusted.IsBidiControl(r)) {
					t.Errorf("%s: control character %U survived in %q", tool, r, s)
				}
			}
		})
		if strings.Contains(body, marker) {
			fencedTools[tool] = true
			if !strings.HasPrefix(blocks[len(blocks)-1], "Provenance:") {
				t.Errorf("%s: an answer with fenced text does not end with the provenance note", tool)
			}
		}
	})
	for _, tool := range []string{"dbc_inspect", "dbc_decode_window", "uds_trace"} {
		if !fencedTools[tool] {
			t.Errorf("%s never carried the hostile text (fenced: %v): the crafted input did not reach it", tool, fencedTools)
		}
	}
}
