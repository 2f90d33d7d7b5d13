package mcp

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fieldtap/drivers/wire"
	"fieldtap/tools/refdata"
)

// The J1939 demo DBC over a passenger car's 11-bit traffic (the Nissan
// Leaf log): no id of the file is on the bus. dbc_decode and
// dbc_decode_window answer no rows and say so, naming the file's ids and
// the bus's most frequent one, counted here from the log.
func TestDBCDecodeSaysNoIDIsOnTheBus(t *testing.T) {
	frames := candumpFrames(t, refdata.File(t, "can", "css_uds_nissan_leaf_2F6913DB.log"))
	counts := map[uint32]int{}
	top := uint32(0)
	for _, f := range frames {
		counts[f.id]++
		if counts[f.id] > counts[top] || counts[f.id] == counts[top] && f.id < top {
			top = f.id
		}
	}
	d, _ := dbcDeps(t, frames, "css_CSS-Electronics-SAE-J1939-DEMO.dbc")
	c := newChecker(t, testServer(t, d, dbcLoad, dbcDecode, dbcDecodeWindow))
	want := []string{
		"can0: no frame of the window carries an id of css_CSS-Electronics-SAE-J1939-DEMO",
		fmt.Sprintf("the window's %d frames carry %d distinct id(s), most frequent: %s ×%d", len(frames), len(counts), wire.FormatCANID(top), counts[top]),
	}

	_, env := c.call("dbc_decode", map[string]any{"message": "EEC1"})
	w := fmt.Sprint(env["warnings"])
	if len(items(env)) != 0 || !strings.Contains(w, "the message has 1 id(s) (0CF004FE; J1939 ones also match their PGN from any source)") {
		t.Errorf("dbc_decode: %d rows, warnings %s", len(items(env)), w)
	}
	for _, s := range want {
		if !strings.Contains(w, s) {
			t.Errorf("dbc_decode warnings %s, want %q", w, s)
		}
	}

	_, env = c.call("dbc_decode_window", map[string]any{})
	w = fmt.Sprint(env["warnings"])
	if !strings.Contains(w, "its messages have 2 id(s) (0CF004FE, 18FEF1FE;") {
		t.Errorf("dbc_decode_window warnings %s", w)
	}
	for _, s := range want {
		if !strings.Contains(w, s) {
			t.Errorf("dbc_decode_window warnings %s, want %q", w, s)
		}
	}

	// Where the ids are on the bus, no such warning.
	d, _ = dbcDeps(t, candumpFrames(t, refdata.File(t, "can", "css_j1939_FCBF0606.log")), "css_CSS-Electronics-SAE-J1939-DEMO.dbc")
	c = newChecker(t, testServer(t, d, dbcLoad, dbcDecode, dbcDecodeWindow))
	_, env = c.call("dbc_decode", map[string]any{"message": "EEC1", "limit": 1})
	if w := fmt.Sprint(env["warnings"]); strings.Contains(w, "no frame of the window") {
		t.Errorf("a decoding answer warns: %s", w)
	}
}

// A DBC missing a ';' loads with a warning naming the line, in dbc_load's
// answer; its 64-bit unsigned signal decodes to a raw over MaxInt64,
// never negative, in dbc_decode's JSON.
func TestDBCLoadWarnsAndDecodesUnsigned64(t *testing.T) {
	dir := t.TempDir()
	text := "BO_ 291 Big: 8 N\n SG_ Counter : 0|64@1+ (1,0) [0|0] \"\" N\nCM_ SG_ 291 Counter \"free running\"\n"
	if err := os.WriteFile(filepath.Join(dir, "u64.dbc"), []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	d := vehicleDeps(t, dir, []vehicleFrame{{id: 0x123, data: []byte{0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}}})
	c := newChecker(t, testServer(t, d, dbcLoad, dbcDecode))
	_, env := c.call("dbc_load", map[string]any{"file": "u64.dbc"})
	if ws := data(env)["warnings"].([]any); len(ws) != 1 || ws[0] != "line 3: CM_ statement does not end with ';': read as if it did" {
		t.Errorf("dbc_load warnings %v", ws)
	}
	if w := fmt.Sprint(env["warnings"]); !strings.Contains(w, "u64.dbc deviates from the DBC format in 1 place(s)") {
		t.Errorf("envelope warnings %s", w)
	}
	r, _ := c.call("dbc_decode", map[string]any{"message": "Big"})
	if txt := r.Content[0].Text; !strings.Contains(txt, `"raw":18446744073709551614`) {
		t.Errorf("raw of FFFF…FE: %s", txt)
	}
}
