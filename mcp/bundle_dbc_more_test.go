package mcp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"fieldtap/tools/refdata"
)

// dbcDeps is vehicleDeps over frames with the reference DBC files named
// copied into the data directory and loaded under their file names.
func dbcDeps(t *testing.T, frames []vehicleFrame, files ...string) (Deps, *checker) {
	t.Helper()
	dir := t.TempDir()
	for _, f := range files {
		raw, err := os.ReadFile(refdata.File(t, "can", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), raw, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	d := vehicleDeps(t, dir, frames)
	c := newChecker(t, testServer(t, d, append([]toolDef{dbcLoad}, dbcTools...)...))
	for _, f := range files {
		if _, env := c.call("dbc_load", map[string]any{"file": f}); env["ok"] != true {
			t.Fatalf("dbc_load %s: %v", f, env["errors"])
		}
	}
	return d, c
}

// The layout of CSS Electronics' J1939 demo DBC as ../shared/testdata/can/
// PROVENANCE.md describes it: EEC1 (0x8CF004FE) EngineSpeed SPN 190 at
// bit 24, 16 bits × 0.125 rpm; CCVS1 (0x98FEF1FE) WheelBasedVehicleSpeed
// SPN 84 at bit 8, 16 bits × 1/256 km/h.
func TestDBCInspectReferenceLayout(t *testing.T) {
	_, c := dbcDeps(t, nil, "css_CSS-Electronics-SAE-J1939-DEMO.dbc")
	r, env := c.call("dbc_inspect", map[string]any{})
	d := env["data"].(map[string]any)
	if d["messages_matched"] != 2.0 || d["signals_matched"] != 2.0 || d["j1939_pgn_matching"] != true {
		t.Fatalf("inspection %v", d)
	}
	type want struct {
		id, name, signal, comment, unit string
		pgn, spn, start                 float64
		length, factor                  float64
	}
	for i, w := range []want{
		{id: "0CF004FE", name: "EEC1", signal: "EngineSpeed", comment: "Electronic Engine Controller 1", unit: "rpm", pgn: 61444, spn: 190, start: 24, length: 16, factor: 0.125},
		{id: "18FEF1FE", name: "CCVS1", signal: "WheelBasedVehicleSpeed", comment: "Cruise Control/Vehicle Speed 1", unit: "km/h", pgn: 65265, spn: 84, start: 8, length: 16, factor: 1.0 / 256},
	} {
		m := d["message_list"].([]any)[i].(map[string]any)
		s := m["signals"].([]any)[0].(map[string]any)
		if m["id"] != w.id || m["name"] != fenced(w.name) || m["pgn"] != w.pgn || s["name"] != fenced(w.signal) || s["spn"] != w.spn ||
			s["start_bit"] != w.start || s["length"] != w.length || s["factor"] != w.factor || s["byte_order"] != "little_endian" {
			t.Errorf("message %d: %v", i, m)
		}
		// services/dbc returns the author's text plain: the row fences it.
		if m["comment"] != fenced(w.comment) || s["unit"] != fenced(w.unit) {
			t.Errorf("message %d: comment %q, unit %q: the DBC author's text is not fenced", i, m["comment"], s["unit"])
		}
	}
	if !strings.HasPrefix(r.Content[len(r.Content)-1].Text, "Provenance:") || !strings.Contains(r.Content[len(r.Content)-1].Text, "DBC file") {
		t.Error("fenced DBC text without the provenance note naming the DBC author")
	}
	_, env = c.call("dbc_inspect", map[string]any{"messages": []any{fenced("CCVS1")}})
	if l := env["data"].(map[string]any)["message_list"].([]any); len(l) != 1 {
		t.Errorf("a fenced name copied back selects %d messages", len(l))
	}
	_, env = c.call("dbc_inspect", map[string]any{"messages": []any{"EEC9"}})
	if code, msg, _ := firstError(t, env); code != CodeNotFound || !strings.Contains(msg, "EEC9") {
		t.Errorf("unknown message: %s %s", code, msg)
	}
}

// css_j1939_FCBF0606.log decoded with the demo DBC and with tp_j1939.dbc
// (a 40-byte EC1 carried by BAM). Independent numbers, stdlib python with
// their own parsers:
//
//	python3 mcp/testdata/j1939_signal.py ../shared/testdata/can/css_j1939_FCBF0606.log 61444 24 16 0.125
//	frames=577 sources=00
//	python3 mcp/testdata/j1939_signal.py ../shared/testdata/can/css_j1939_FCBF0606.log 65265 8 16 0.00390625
//	frames=184 sources=47
//	python3 services/j1939/testdata/tp_signal.py ../shared/testdata/can/css_j1939_FCBF0606.log 65251 96 16 0.125
//	transfers=13 value=1566.5x12 value=1600.0x1
func TestDBCDecodeWindowOnAReferenceLog(t *testing.T) {
	frames := candumpFrames(t, refdata.File(t, "can", "css_j1939_FCBF0606.log"))
	_, c := dbcDeps(t, frames, "css_CSS-Electronics-SAE-J1939-DEMO.dbc", "css_tp_j1939.dbc")
	const eec1, ccvs1, transfers = 577, 184, 13
	_, env := c.call("dbc_decode_window", map[string]any{"database": "css_CSS-Electronics-SAE-J1939-DEMO", "max_rows": 10})
	p := env["data"].(map[string]any)["ports"].([]any)[0].(map[string]any)
	tally := map[string]float64{}
	for _, m := range p["messages"].([]any) {
		m := m.(map[string]any)
		tally[m["message"].(string)] = m["frames"].(float64)
	}
	if tally[fenced("EEC1")] != eec1 || tally[fenced("CCVS1")] != ccvs1 || p["decoded"] != float64(eec1+ccvs1) {
		t.Errorf("tallies %v decoded %v, want EEC1 %d CCVS1 %d", tally, p["decoded"], eec1, ccvs1)
	}
	if len(p["rows"].([]any)) != 10 || p["rows_truncated"] != true || len(env["warnings"].([]any)) != 1 {
		t.Errorf("max_rows 10: %d rows, truncated %v, warnings %v", len(p["rows"].([]any)), p["rows_truncated"], env["warnings"])
	}

	_, env = c.call("dbc_decode_window", map[string]any{"database": "css_tp_j1939", "max_rows": 100})
	p = env["data"].(map[string]any)["ports"].([]any)[0].(map[string]any)
	got := map[float64]int{}
	for _, r := range p["rows"].([]any) {
		r := r.(map[string]any)
		if r["via"] != "tp-BAM" || r["match"] != "transfer-pgn" {
			t.Errorf("row %v", r)
		}
		got[r["signals"].([]any)[0].(map[string]any)["value"].(float64)]++
	}
	if p["decoded"] != float64(transfers) || got[1566.5] != 12 || got[1600] != 1 {
		t.Errorf("decoded %v, EngineSpeedAtPoint5 %v; want 13 transfers, 1566.5×12 and 1600×1", p["decoded"], got)
	}
}

// EngineSpeed 1500 rpm in EEC1 is raw 12000 = 0x2EE0 in bytes 4 and 5,
// little endian (SAE J1939-71 SPN 190, 0.125 rpm/bit), the other bytes
// 0xFF (not available); the frame is one can_send takes.
func TestDBCEncodeFeedsCanSend(t *testing.T) {
	_, c := dbcDeps(t, nil, "css_CSS-Electronics-SAE-J1939-DEMO.dbc")
	_, env := c.call("dbc_encode", map[string]any{"message": "EEC1", "values": []any{map[string]any{"signal": fenced("EngineSpeed"), "value": 1500}}})
	d := env["data"].(map[string]any)
	const want = "FFFFFFE02EFFFFFF"
	f, _ := d["can_send_frame"].(map[string]any)
	if d["data"] != want || f["data"] != want || f["id"] != "0CF004FE" || f["extended"] != true {
		t.Fatalf("encoded %v", d)
	}
	// The frame validates against can_send's own input schema.
	var in json.RawMessage
	for _, lt := range listTools(t, testServer(t, testDeps(), canSend)) {
		in = lt.InputSchema
	}
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(string(in)))
	if err != nil {
		t.Fatal(err)
	}
	comp := jsonschema.NewCompiler()
	if err := comp.AddResource("mem://can_send.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := comp.Compile("mem://can_send.json")
	if err != nil {
		t.Fatal(err)
	}
	args, _ := json.Marshal(map[string]any{"port": "can0", "frames": []any{f}})
	inst, _ := jsonschema.UnmarshalJSON(strings.NewReader(string(args)))
	if err := sch.Validate(inst); err != nil {
		t.Errorf("can_send refuses dbc_encode's frame: %v", err)
	}

	for _, tc := range []struct {
		name string
		args map[string]any
		arg  string
	}{
		{name: "over the declared range", args: map[string]any{"message": "EEC1", "values": []any{map[string]any{"signal": "EngineSpeed", "value": 9000}}}, arg: "EngineSpeed"},
		{name: "unknown signal", args: map[string]any{"message": "EEC1", "values": []any{map[string]any{"signal": "Boost", "value": 1}}}, arg: "Boost"},
		{name: "short base", args: map[string]any{"message": "EEC1", "base": "FFFF", "values": []any{map[string]any{"signal": "EngineSpeed", "value": 1}}}, arg: "base"},
		{name: "twice", args: map[string]any{"message": "EEC1", "values": []any{map[string]any{"signal": "EngineSpeed", "value": 1}, map[string]any{"signal": "EngineSpeed", "value": 2}}}, arg: "twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, env := c.call("dbc_encode", tc.args)
			if code, msg, _ := firstError(t, env); code != CodeInvalidArgument || !strings.Contains(msg, tc.arg) {
				t.Errorf("%s %s, want INVALID_ARGUMENT naming %s", code, msg, tc.arg)
			}
		})
	}
}
