package mcp

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"fieldtap/services/j1587"
	"fieldtap/services/ring"
)

func j1708Deps(t *testing.T) Deps {
	t.Helper()
	s, err := j1587.New(ring.Limits{Items: 1000, Bytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	p, _ := s.Port("j1708")
	t0 := time.Unix(1000, 0)
	for i := range 30 {
		p.Add(t0.Add(time.Duration(i)*100*time.Millisecond), []byte{0x80, 0x54, 0x38, 0xF4}, false) // road speed 28 mph
	}
	p.Add(t0.Add(5*time.Second), []byte{0x80, 0xC2, 0x00, 0xBE}, false) // empty fault table
	p.Add(t0.Add(6*time.Second), []byte{0x80, 0x54, 0x38, 0xF5}, false) // bad checksum
	d := testDeps()
	d.J1587 = s
	return d
}

func callJ1708(t *testing.T, d Deps, name string, args map[string]any) map[string]any {
	t.Helper()
	for _, st := range j1708Tools(d) {
		if st.Tool.Name != name {
			continue
		}
		req := mcpgo.CallToolRequest{}
		req.Params.Name = name
		req.Params.Arguments = args
		res, err := st.Handler(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		var out map[string]any
		if err := json.Unmarshal(res.RawStructuredContent, &out); err != nil {
			t.Fatal(err)
		}
		if out["ok"] != !res.IsError {
			t.Fatalf("ok=%v but isError=%v", out["ok"], res.IsError)
		}
		return out
	}
	t.Fatalf("no tool %s", name)
	return nil
}

func TestJ1708MessagesPagesWithCursor(t *testing.T) {
	d := j1708Deps(t)
	seen := 0
	args := map[string]any{"mid": 128, "pid": 84, "limit": 7}
	for range 10 {
		out := callJ1708(t, d, toolJ1708Messages, args)
		page := out["page"].(map[string]any)
		if page["total_matched"].(float64) != 30 {
			t.Fatalf("page = %v", page)
		}
		seen += len(out["items"].([]any))
		if !page["truncated"].(bool) {
			break
		}
		args["cursor"] = page["next_cursor"]
	}
	if seen != 30 {
		t.Errorf("paged %d messages, want 30", seen)
	}
	if out := callJ1708(t, d, toolJ1708Messages, map[string]any{"cursor": "bm9wZQ"}); out["ok"] != false {
		t.Errorf("foreign cursor accepted: %v", out)
	}
}

func TestJ1708Tools(t *testing.T) {
	d := j1708Deps(t)
	tests := []struct {
		name  string
		tool  string
		args  map[string]any
		check func(t *testing.T, out map[string]any)
	}{
		{name: "summary counts", tool: toolJ1587Summary, check: func(t *testing.T, out map[string]any) {
			data := out["data"].(map[string]any)
			if data["messages"].(float64) != 32 || data["checksum_bad"].(float64) != 1 {
				t.Errorf("summary = %v", data)
			}
		}},
		{name: "parameters with unit", tool: toolJ1587Parameters, args: map[string]any{"mid": 128}, check: func(t *testing.T, out map[string]any) {
			ps := out["data"].(map[string]any)["parameters"].([]any)
			p := ps[0].(map[string]any)
			if p["pid"].(float64) != 84 || p["value"].(float64) != 28 || p["unit"] != "mph" {
				t.Errorf("parameter = %v", p)
			}
		}},
		{name: "faults say tables were seen", tool: toolJ1587Faults, check: func(t *testing.T, out map[string]any) {
			data := out["data"].(map[string]any)
			if len(data["faults"].([]any)) != 0 || len(data["fault_tables"].([]any)) != 1 {
				t.Errorf("faults = %v", data)
			}
		}},
		{name: "export", tool: toolExportJ1708Log, args: map[string]any{"max_messages": 2}, check: func(t *testing.T, out map[string]any) {
			data := out["data"].(map[string]any)
			if data["log"] != "(1005.000000) j1708 80C200BE\n(1006.000000) j1708 805438F5\n" || data["left_out"].(float64) != 30 {
				t.Errorf("export = %v", data)
			}
		}},
		{name: "bad mid refused", tool: toolJ1587Parameters, args: map[string]any{"mid": 300}, check: func(t *testing.T, out map[string]any) {
			if out["ok"] != false {
				t.Errorf("mid 300 accepted")
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.check(t, callJ1708(t, d, tc.tool, tc.args)) })
	}
}

func TestJ1708ToolsWithoutStore(t *testing.T) {
	for _, st := range j1708Tools(testDeps()) {
		t.Run(st.Tool.Name, func(t *testing.T) {
			if out := callJ1708(t, testDeps(), st.Tool.Name, nil); out["ok"] != false {
				t.Errorf("answered without a store: %v", out)
			}
		})
	}
}
