package mcp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fieldtap/drivers/wire"
	"fieldtap/services/dbc"
	"fieldtap/services/j1939"
	"fieldtap/tools/refdata"
)

// oemDBCDeps is vehicleDeps with oem.dbc (the text oem) in its data
// folder for dbc_load, whose databases extend the J1939 catalogue as the
// daemon wires it (firmware/daemon/analysers.go).
func oemDBCDeps(t *testing.T, oem string) Deps {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "oem.dbc"), []byte(oem), 0o600); err != nil {
		t.Fatal(err)
	}
	d := vehicleDeps(t, dir, nil)
	d.DBC.Watch(func(loaded []*dbc.Database) {
		cat, _ := j1939.NewCatalogue(loaded...)
		d.J1939.SetCatalogue(cat)
	})
	return d
}

// An operator's J1939 DBC defines SPN 9999 (Boost, EEC1 bytes 2-3, 0.25
// kPa/bit, -50) beside the built-in catalogue; once dbc_load reads it,
// j1939_spn and j1939_pgn decode it, the name and unit fenced as the file
// author's text. Independent numbers over j1939atk_normal.log:
//
//	python3 mcp/testdata/j1939_signal.py ../shared/testdata/can/j1939atk_normal.log 61444 8 16 0.25 -50
//	frames=1499 sources=00 min=8174.25 max=10872.5 first=9908.75 last=8688.0
func TestJ1939CatalogueFromAnOperatorDBC(t *testing.T) {
	const oem = "BO_ 2565866545 Oem: 8 N\n SG_ Boost : 8|16@1+ (0.25,-50) [0|16000] \"kPa\" N\n" +
		"BA_DEF_ SG_ \"SPN\" INT 0 524287;\nBA_ \"SPN\" SG_ 2565866545 Boost 9999;\n"
	const frames, first, last = 1499, 9908.75, 8688.0
	d := oemDBCDeps(t, oem)
	c := newChecker(t, testServer(t, d, append([]toolDef{dbcLoad}, j1939Tools...)...))
	_, env := c.call("j1939_spn", map[string]any{"spn": 9999})
	if code, msg, _ := firstError(t, env); code != CodeInvalidArgument || !strings.Contains(msg, "9999") {
		t.Fatalf("SPN 9999 before the load: %s %s", code, msg)
	}
	if _, env := c.call("dbc_load", map[string]any{"file": "oem.dbc"}); env["ok"] != true {
		t.Fatalf("dbc_load: %v", env["errors"])
	}
	for _, f := range candumpFrames(t, refdata.File(t, "can", "j1939atk_normal.log")) {
		if err := d.J1939.Feed("can0", f.t, f.id&wire.CANEFFMask, f.id&wire.CANEFF != 0, f.data); err != nil {
			t.Fatal(err)
		}
	}
	r, env := c.call("j1939_spn", map[string]any{"spn": 9999, "limit": 1})
	rows := items(env)
	if pg := pageOf(env); pg["total_matched"] != float64(frames) || len(rows) != 1 {
		t.Fatalf("page %v rows %v", pg, rows)
	}
	if rows[0]["value"] != first || rows[0]["sa"] != 0.0 || rows[0]["dbc_unit"] != fenced("kPa") {
		t.Errorf("first sample %v", rows[0])
	}
	if !strings.Contains(r.Content[len(r.Content)-1].Text, "DBC file") {
		t.Error("a fenced DBC unit without the provenance note naming the DBC author")
	}

	r, env = c.call("j1939_pgn", map[string]any{"pgn": 61444, "sa": 0})
	src := data(env)["sources"].([]any)[0].(map[string]any)
	var boost, speed map[string]any
	for _, v := range src["spns"].([]any) {
		switch v := v.(map[string]any); v["spn"] {
		case 9999.0:
			boost = v
		case 190.0:
			speed = v
		}
	}
	if boost == nil || boost["dbc_name"] != fenced("Boost") || boost["dbc_unit"] != fenced("kPa") || boost["name"] != nil || boost["source"] != "dbc:oem" || boost["value"] != last {
		t.Errorf("SPN 9999 in EEC1: %v", boost)
	}
	if speed == nil || speed["name"] == nil || speed["dbc_name"] != nil || speed["source"] != j1939.SourceBuiltin {
		t.Errorf("SPN 190 in EEC1: %v", speed)
	}
	if note := r.Content[len(r.Content)-1].Text; !strings.Contains(note, "DBC file") || strings.Contains(note, "VIN") {
		t.Errorf("j1939_pgn's provenance note does not blame the DBC author alone: %s", note)
	}
}
