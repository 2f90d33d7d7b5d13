package mcp

import (
	"context"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"fieldtap/drivers/wire"
	"fieldtap/services/canbus"
	"fieldtap/services/j1939"
	"fieldtap/services/ring"
)

func canTestDeps(t *testing.T) Deps {
	d := testDeps()
	d.CAN, _ = canbus.New(ring.Limits{})
	d.J1939, _ = j1939.New(j1939.Limits{})
	p, err := d.CAN.Port("can", 0)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Unix(1000, 0)
	for i := range 5 {
		p.Add(t0.Add(time.Duration(i)*time.Millisecond), 0x18FECA31|wire.CANEFF, []byte{0xC0, 0xFF, 0xA8, 0x00, 0x11, 0x7E, 0xFF, 0xFF})
		d.J1939.Feed("can", t0, 0x18FECA31, true, []byte{0xC0, 0xFF, 0xA8, 0x00, 0x11, 0x7E, 0xFF, 0xFF})
	}
	return d
}

func callTool(t *testing.T, d Deps, name string, args map[string]any) map[string]any {
	t.Helper()
	for _, b := range bundles(d) {
		for _, st := range b.Tools {
			if st.Tool.Name == name {
				req := mcpgo.CallToolRequest{}
				req.Params.Name = name
				req.Params.Arguments = args
				res, err := st.Handler(context.Background(), req)
				if err != nil {
					t.Fatal(err)
				}
				return decode(t, res)
			}
		}
	}
	t.Fatalf("no tool %s", name)
	return nil
}

func TestCANFramesPagesWithCursor(t *testing.T) {
	d := canTestDeps(t)
	var seen int
	cursor := ""
	for range 10 {
		args := map[string]any{"limit": 2, "id": "18FECA31"}
		if cursor != "" {
			args["cursor"] = cursor
		}
		m := callTool(t, d, toolCANFrames, args)
		if m["ok"] != true {
			t.Fatalf("answer = %v", m)
		}
		seen += len(m["items"].([]any))
		page := m["page"].(map[string]any)
		if page["total_matched"].(float64) != 5 {
			t.Errorf("total_matched = %v", page["total_matched"])
		}
		cursor, _ = page["next_cursor"].(string)
		if cursor == "" {
			break
		}
	}
	if seen != 5 {
		t.Errorf("paged through %d frames, want 5", seen)
	}
	bad := callTool(t, d, toolCANFrames, map[string]any{"cursor": "bogus"})
	if bad["ok"] != false {
		t.Errorf("a foreign cursor must be refused: %v", bad)
	}
}

func TestJ1939FaultsCarrySAELayout(t *testing.T) {
	d := canTestDeps(t)
	m := callTool(t, d, toolJ1939Faults, nil)
	items := m["items"].([]any)
	if len(items) != 1 {
		t.Fatalf("items = %v", items)
	}
	f := items[0].(map[string]any)
	dtc := f["dtcs"].([]any)[0].(map[string]any)
	if f["sa"].(float64) != 49 || dtc["spn"].(float64) != 168 || dtc["fmi"].(float64) != 17 || dtc["oc"].(float64) != 126 || dtc["cm"].(float64) != 0 {
		t.Errorf("fault = %v", f)
	}
	if lamps := f["lamps"].(map[string]any); lamps["mil"].(float64) != j1939.LampNotAvailable {
		t.Errorf("lamps = %v", lamps)
	}
}

func TestJ1939PrintableViewIsFenced(t *testing.T) {
	row, fenced := fenceTagged(j1939PGNRow{Text: new(printableASCII([]byte("1L06\x00\x1b[31m⟦x")))})
	want := fenceOpen + "1L06..[31m...x" + fenceClose
	if !fenced || *row.Text != want {
		t.Errorf("fence = %q, want %q", *row.Text, want)
	}
}
