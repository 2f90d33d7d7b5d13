package mcp

import (
	"strings"
	"testing"

	"fieldtap/drivers/wire"
	"fieldtap/tools/refdata"
)

// j1939_faults over j1939atk_normal.log, against GROUND_TRUTH.json's
// dm1_dtcs for it: SA 0 lists SPN 84/FMI 9, 191/9 and 5357/31 in 30 DM1s
// each; SA 49 lists 96/3 and 829/3 in 2; SA 3 and 49 also send the "no
// active DTC" placeholder (30 and 29 times), which has no row. SPN 5357
// is not in the built-in catalogue: an operator's DBC that names it has
// the name fenced.
func TestJ1939FaultsAgainstGroundTruth(t *testing.T) {
	const oem = "BO_ 2566844672 Oem: 8 N\n SG_ Doser : 0|8@1+ (1,0) [0|250] \"\" N\n" +
		"BA_DEF_ SG_ \"SPN\" INT 0 524287;\nBA_ \"SPN\" SG_ 2566844672 Doser 5357;\n"
	d := oemDBCDeps(t, oem)
	c := newChecker(t, testServer(t, d, append([]toolDef{dbcLoad}, j1939Tools...)...))
	for _, f := range candumpFrames(t, refdata.File(t, "can", "j1939atk_normal.log")) {
		if err := d.J1939.Feed("can0", f.t, f.id&wire.CANEFFMask, f.id&wire.CANEFF != 0, f.data); err != nil {
			t.Fatal(err)
		}
	}
	_, env := c.call("j1939_faults", nil)
	rows := items(env)
	type want struct {
		sa, spn, fmi, messages float64
		ecu, spnName, fmiText  string
	}
	wants := []want{
		{0, 84, 9, 30, "Engine #1", "Wheel-based vehicle speed", "Abnormal update rate"},
		{0, 191, 9, 30, "Engine #1", "", "Abnormal update rate"},
		{0, 5357, 31, 30, "Engine #1", "", "Condition exists"},
		{49, 96, 3, 2, "Cab Controller - Primary", "Fuel level 1", "Voltage above normal, or shorted to high source"},
		{49, 829, 3, 2, "Cab Controller - Primary", "", "Voltage above normal, or shorted to high source"},
	}
	if len(rows) != len(wants) {
		t.Fatalf("%d rows, want %d (no placeholder rows): %v", len(rows), len(wants), rows)
	}
	for i, w := range wants {
		r := rows[i]
		if r["sa"] != w.sa || r["spn"] != w.spn || r["fmi"] != w.fmi || r["messages"] != w.messages || r["kind"] != "DM1" ||
			r["ecu"] != w.ecu || r["fmi_text"] != w.fmiText || (w.spnName != "" && r["spn_name"] != w.spnName) {
			t.Errorf("row %d = %v, want %+v", i, r, w)
		}
		if r["first_seen"] == nil || r["last_seen"] == nil || r["listed"] == nil {
			t.Errorf("row %d without first/last seen or listed: %v", i, r)
		}
	}
	if r, _ := c.call("j1939_faults", nil); strings.Contains(r.Content[len(r.Content)-1].Text, "DBC file") {
		t.Error("a provenance note about a DBC before any was loaded")
	}

	if _, env := c.call("dbc_load", map[string]any{"file": "oem.dbc"}); env["ok"] != true {
		t.Fatalf("dbc_load: %v", env["errors"])
	}
	r, env := c.call("j1939_faults", map[string]any{"fields": []string{"dbc_spn_name", "spn_name"}})
	rows = items(env)
	if rows[2]["spn"] != 5357.0 || rows[2]["dbc_spn_name"] != fenced("Doser") || rows[2]["spn_name"] != nil {
		t.Errorf("SPN 5357 after the DBC: %v", rows[2])
	}
	if rows[0]["spn_name"] != "Wheel-based vehicle speed" || rows[0]["dbc_spn_name"] != nil {
		t.Errorf("SPN 84 after the DBC: %v", rows[0])
	}
	if !strings.Contains(r.Content[len(r.Content)-1].Text, "DBC file") {
		t.Error("a fenced DBC name without the provenance note naming the DBC author")
	}
}
