package mcp

import (
	"slices"
	"testing"
)

// The public J1587 tables (SAE J1587 appendix; the same scalings as
// grimm-co/stm32-j1708's pid_info.py): PID 84 road speed, one byte of
// 0.5 mph; PID 190 engine speed, two bytes of 0.25 rpm; PID 194 the
// diagnostic code table; PID 237 the VIN, text. The J2497 trailer MIDs
// are the trailer and dolly assignments of the J1587 MID table.
func TestJ1587Reference(t *testing.T) {
	c := newChecker(t, testServer(t, testDeps(), j1587RefTools...))
	_, env := c.call("j1587_pids", map[string]any{})
	d := data(env)
	all := d["pids"].([]any)
	if len(all) == 0 || float64(len(all)) != d["pids_known"] {
		t.Fatalf("%d PIDs listed of %v", len(all), d["pids_known"])
	}
	by := map[float64]map[string]any{}
	for _, p := range all {
		p := p.(map[string]any)
		by[p["pid"].(float64)] = p
	}
	for _, tc := range []struct {
		pid        float64
		kind, unit string
		scale      any
		valueBytes any
	}{
		{pid: 84, kind: "number", unit: "mph", scale: 0.5, valueBytes: 1.0},
		{pid: 190, kind: "number", unit: "rpm", scale: 0.25, valueBytes: 2.0},
		{pid: 194, kind: "faults", scale: nil, valueBytes: nil},
		{pid: 237, kind: "text", scale: nil, valueBytes: nil},
	} {
		p := by[tc.pid]
		if p == nil || p["kind"] != tc.kind || p["scale"] != tc.scale || p["value_bytes"] != tc.valueBytes || (tc.unit != "" && p["unit"] != tc.unit) {
			t.Errorf("PID %v = %v", tc.pid, p)
		}
	}
	_, env = c.call("j1587_pids", map[string]any{"kind": "text"})
	for _, p := range data(env)["pids"].([]any) {
		if p.(map[string]any)["kind"] != "text" {
			t.Errorf("kind=text lists %v", p)
		}
	}
	_, env = c.call("j1587_pids", map[string]any{"pid": 500})
	if code, _, _ := firstError(t, env); code != CodeNotFound {
		t.Errorf("an unknown PID: %s", code)
	}

	_, env = c.call("j2497_mids", map[string]any{})
	var mids []int
	for _, m := range data(env)["mids"].([]any) {
		mids = append(mids, int(m.(map[string]any)["mid"].(float64)))
	}
	want := []int{133, 137, 138, 139, 147, 151, 155, 167, 168, 169, 217, 218, 246, 247}
	if !slices.Equal(mids, want) {
		t.Errorf("J2497 MIDs %v, want %v", mids, want)
	}
	_, env = c.call("j2497_mids", map[string]any{"all": true})
	allMIDs := data(env)["mids"].([]any)
	if len(allMIDs) != 128 || allMIDs[0].(map[string]any)["mid"] != 128.0 || allMIDs[0].(map[string]any)["name"] != "Engine #1" {
		t.Errorf("all MIDs: %d, first %v", len(allMIDs), allMIDs[0])
	}
}
