package mcp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fieldtap/drivers/wire"
	"fieldtap/services/canbus"
	"fieldtap/services/dbc"
	"fieldtap/services/ring"
)

// dbcTestDeps has a data directory holding the dbc package's hand-made
// files and a CAN port carrying Mixed (0x123) and a J1939 frame from
// another source address than the DBC's.
func dbcTestDeps(t *testing.T) Deps {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{"handmade.dbc", "prose.dbc"} {
		b, err := os.ReadFile(filepath.Join("..", "services", "dbc", "testdata", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	d := testDeps()
	d.DBC = dbc.NewRegistry(dir)
	d.CAN, _ = canbus.New(ring.Limits{})
	p, err := d.CAN.Port("can0", 0)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Unix(1000, 0)
	for i := range 3 {
		p.Add(t0.Add(time.Duration(i)*time.Millisecond), 0x123, []byte{0x34, 0xF2, 0xAB, 0xC0, 0x00, byte(i), 0x9C, 0xFF})
	}
	p.Add(t0.Add(5*time.Millisecond), 0x0CFEF100|wire.CANEFF, []byte{0, 0x00, 0x20, 0, 0, 0, 0, 0})
	return d
}

func TestDBCLoad(t *testing.T) {
	d := dbcTestDeps(t)
	tests := []struct {
		name, file string
		code       string // "" = ok
		msg        string
	}{
		{name: "loads", file: "handmade.dbc"},
		{name: "escape", file: "../handmade.dbc", code: CodeInvalidArgument},
		{name: "absolute", file: "/etc/passwd", code: CodeInvalidArgument},
		{name: "missing", file: "nope.dbc", code: codeCANNotFound},
		{name: "prose", file: "prose.dbc", code: codeDBCRefused, msg: "prose.dbc:"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := callTool(t, d, toolDBCLoad, map[string]any{"file": tc.file})
			if tc.code == "" {
				data := m["data"].(map[string]any)
				if m["ok"] != true || data["messages"].(float64) != 3 || data["j1939_pgn_matching"] != true {
					t.Fatalf("answer = %v", m)
				}
				name := data["message_list"].([]any)[0].(map[string]any)["name"].(string)
				if !strings.HasPrefix(name, fenceOpen) {
					t.Errorf("message name %q is not fenced", name)
				}
				return
			}
			errs, _ := m["errors"].([]any)
			if m["ok"] != false || len(errs) != 1 {
				t.Fatalf("answer = %v", m)
			}
			e := errs[0].(map[string]any)
			if e["code"] != tc.code || !strings.Contains(e["message"].(string), tc.msg) {
				t.Errorf("error = %v, want %s …%s", e, tc.code, tc.msg)
			}
		})
	}
}

func TestDBCDecode(t *testing.T) {
	d := dbcTestDeps(t)
	if m := callTool(t, d, toolDBCLoad, map[string]any{"file": "handmade.dbc", "name": "car"}); m["ok"] != true {
		t.Fatal(m)
	}
	// Paged, one row a page, every signal.
	cursor, seen := "", 0
	for range 5 {
		args := map[string]any{"message": "Mixed", "limit": 1}
		if cursor != "" {
			args["cursor"] = cursor
		}
		m := callTool(t, d, toolDBCDecode, args)
		items := m["items"].([]any)
		seen += len(items)
		row := items[0].(map[string]any)
		sigs := row["signals"].([]any)
		if len(sigs) != 5 || row["id"] != "123" || row["match"] != "exact" {
			t.Fatalf("row = %v", row)
		}
		page := m["page"].(map[string]any)
		if page["total_matched"].(float64) != 3 {
			t.Errorf("total_matched = %v", page["total_matched"])
		}
		if cursor, _ = page["next_cursor"].(string); cursor == "" {
			break
		}
	}
	if seen != 3 {
		t.Errorf("paged %d rows, want 3", seen)
	}
	tests := []struct {
		name   string
		args   map[string]any
		rows   int
		value  float64
		label  string
		status string
	}{
		{name: "one signal with label", args: map[string]any{"message": "123", "signal": "Gear"}, rows: 3, value: 0, label: "Park", status: "ok"},
		{name: "scaled and offset", args: map[string]any{"message": "Mixed", "signal": "IntelU"}, rows: 3, value: 292, status: "ok"},
		{name: "j1939 by PGN", args: map[string]any{"database": "car", "message": "J1939Msg", "signal": "Speed"}, rows: 1, value: 32, status: "ok"},
		{name: "fenced name accepted", args: map[string]any{"message": fenceOpen + "Mixed" + fenceClose, "signal": "Temp"}, rows: 3, value: -50, status: "ok"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := callTool(t, d, toolDBCDecode, tc.args)
			items, _ := m["items"].([]any)
			if len(items) != tc.rows {
				t.Fatalf("answer = %v", m)
			}
			v := items[0].(map[string]any)["signals"].([]any)[0].(map[string]any)
			if v["status"] != tc.status || v["value"].(float64) != tc.value {
				t.Errorf("value = %v", v)
			}
			if tc.label != "" && v["label"] != fenceOpen+tc.label+fenceClose {
				t.Errorf("label = %v, want it fenced", v["label"])
			}
			if !strings.HasPrefix(v["signal"].(string), fenceOpen) {
				t.Errorf("signal name %v is not fenced", v["signal"])
			}
		})
	}
	bad := callTool(t, d, toolDBCDecode, map[string]any{"message": "Nope"})
	if bad["ok"] != false {
		t.Errorf("an unknown message must fail: %v", bad)
	}
	proj := callTool(t, d, toolDBCDecode, map[string]any{"message": "Mixed", "fields": []any{"time"}})
	row := proj["items"].([]any)[0].(map[string]any)
	if _, has := row["signals"]; has || row["seq"] == nil || row["time"] == nil {
		t.Errorf("projected row = %v", row)
	}
}
