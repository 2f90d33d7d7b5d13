package mcp

import (
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	"fieldtap/drivers/wire"
	"fieldtap/tools/refdata"
)

// An operator's DBC gives EEC1 (PGN 61444) another engine-speed layout
// (SPN 190 in bytes 2-3 where the built-in table has bytes 4-5). The
// first 400 of the first 800 EEC1 frames of j1939atk_normal.log arrive
// before dbc_load, the rest after. j1939_pgn decodes the latest payload with the DBC, j1939_spn's
// samples keep the definition that decoded them when they arrived: both
// name the file and message, the series' last value equals j1939_pgn's,
// and every value equals the layout applied to the frame by hand.
func TestJ1939OverrideStatedInBothAnswers(t *testing.T) {
	const oem = "BO_ 2364540158 EEC1: 8 Engine\n SG_ OemSpeed : 8|16@1+ (0.125,0) [0|8031.875] \"rpm\" N\n" +
		"BA_DEF_ SG_ \"SPN\" INT 0 524287;\nBA_ \"SPN\" SG_ 2364540158 OemSpeed 190;\n"
	d := oemDBCDeps(t, oem)
	c := newChecker(t, testServer(t, d, append([]toolDef{dbcLoad}, j1939Tools...)...))
	var eec1 []vehicleFrame
	frames := candumpFrames(t, refdata.File(t, "can", "j1939atk_normal.log"))
	for _, f := range frames {
		if f.id&wire.CANEFFMask>>8&0x3FFFF == 61444 && f.id&0xFF == 0 {
			eec1 = append(eec1, f)
		}
	}
	if len(eec1) < 800 {
		t.Fatalf("%d EEC1 frames from SA 0", len(eec1))
	}
	eec1 = eec1[:800] // one page
	feed := func(fs []vehicleFrame) {
		for _, f := range fs {
			if err := d.J1939.Feed("can0", f.t, f.id&wire.CANEFFMask, f.id&wire.CANEFF != 0, f.data); err != nil {
				t.Fatal(err)
			}
		}
	}
	half := len(eec1) / 2
	feed(eec1[:half])
	if _, env := c.call("dbc_load", map[string]any{"file": "oem.dbc"}); env["ok"] != true {
		t.Fatalf("dbc_load: %v", env["errors"])
	}
	feed(eec1[half:])
	rpm := func(f vehicleFrame, byteIndex int) float64 {
		return float64(binary.LittleEndian.Uint16(f.data[byteIndex:])) * 0.125
	}
	lastFrame := eec1[len(eec1)-1]
	if rpm(lastFrame, 1) == rpm(lastFrame, 3) {
		t.Fatal("the two layouts agree on the last frame: the test shows nothing")
	}

	_, env := c.call("j1939_pgn", map[string]any{"pgn": 61444, "sa": 0})
	var speed map[string]any
	for _, v := range data(env)["sources"].([]any)[0].(map[string]any)["spns"].([]any) {
		if v := v.(map[string]any); v["spn"] == 190.0 {
			speed = v
		}
	}
	if speed["source"] != "dbc:oem" || speed["value"] != rpm(lastFrame, 1) {
		t.Errorf("j1939_pgn SPN 190 %v, want dbc:oem %v", speed, rpm(lastFrame, 1))
	}
	const named = "SPN 190 of PGN 61444 is decoded with dbc:oem (file oem.dbc, message EEC1: start bit 8, 16 bits little-endian, ×0.125 +0), replacing the builtin definition"
	if w := fmt.Sprint(env["warnings"]); !strings.Contains(w, named) {
		t.Errorf("j1939_pgn warnings %s", w)
	}

	_, env = c.call("j1939_spn", map[string]any{"spn": 190, "sa": 0, "limit": 1000})
	rows := items(env)
	if len(rows) != len(eec1) {
		t.Fatalf("%d rows for %d frames", len(rows), len(eec1))
	}
	for i, r := range rows {
		src, want := "builtin", rpm(eec1[i], 3)
		if i >= half {
			src, want = "dbc:oem", rpm(eec1[i], 1)
		}
		if r["source"] != src || r["value"] != want {
			t.Fatalf("row %d: %v, want %s %v", i, r, src, want)
		}
	}
	if rows[len(rows)-1]["value"] != speed["value"] {
		t.Errorf("j1939_spn's last value %v, j1939_pgn's %v", rows[len(rows)-1]["value"], speed["value"])
	}
	counts := fmt.Sprintf("rows: %d by builtin, %d by dbc:oem", half, len(eec1)-half)
	if w := fmt.Sprint(env["warnings"]); !strings.Contains(w, named) || !strings.Contains(w, counts) {
		t.Errorf("j1939_spn warnings %s, want %q and %q", w, named, counts)
	}
}
