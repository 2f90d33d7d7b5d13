package mcp

import (
	"math"
	"strings"
	"testing"
)

// j1939atk_normal.log against services/canre/testdata/re_count.py
// (stdlib python: its own reader, field extraction, CRCs, entropy and
// correlation), the numbers services/canre's tests carry:
//
//	re_count.py j1939atk_normal.log 0CF00203: frames=3000, byte entropies
//	  0.660691 7.882347 4.404601 0 0 7.852862 3.848429 0, distinct 3 256 29 1 1 254 21 1
//	re_count.py j1939atk_normal.log --scan: 18FD7B00 30 counters [(16, 8, 1.0, 0)]
//	re_count.py j1939atk_normal.log --corr 0CF00203 8 16 18FEF100 8 16:
//	  pairs=2999 r=0.998459 slope=1.167159 intercept=-172.927673
func TestCanREOnAReferenceLog(t *testing.T) {
	c := newChecker(t, testServer(t, vehiclePorts(t, t.TempDir(), refLog(t, "can0", "j1939atk_normal.log")), canreTools...))
	_, env := c.call("can_re_analyse", map[string]any{"id": "0CF00203"})
	d := data(env)
	if d["frames"] != 3000.0 || d["dlc"] != 8.0 {
		t.Fatalf("series %v frames dlc %v", d["frames"], d["dlc"])
	}
	entropy := []float64{0.660691, 7.882347, 4.404601, 0, 0, 7.852862, 3.848429, 0}
	distinct := []float64{3, 256, 29, 1, 1, 254, 21, 1}
	for k, b := range d["entropy"].(map[string]any)["bytes"].([]any) {
		b := b.(map[string]any)
		if math.Abs(b["entropy"].(float64)-entropy[k]) > 1e-6 || b["distinct_values"] != distinct[k] {
			t.Errorf("byte %d = %v, want entropy %v distinct %v", k, b, entropy[k], distinct[k])
		}
	}
	// READ: output shaft speed at bits 8..21, input shaft speed 40..52.
	found := map[[2]float64]bool{}
	for _, s := range d["signals"].(map[string]any)["little_endian"].([]any) {
		f := s.(map[string]any)["field"].(map[string]any)
		found[[2]float64{f["start_bit"].(float64), f["length"].(float64)}] = true
	}
	if !found[[2]float64{8, 14}] || !found[[2]float64{40, 13}] {
		t.Errorf("signal candidates %v", found)
	}
	if cs := d["checksums"].(map[string]any)["candidates"].([]any); len(cs) != 0 {
		t.Errorf("checksums %v in ETC1, which has none", cs)
	}

	_, env = c.call("can_re_analyse", map[string]any{"id": "18FD7B00", "analyses": []any{"counters"}})
	d = data(env)
	if d["entropy"] != nil || d["signals"] != nil {
		t.Error("analyses not asked for were run")
	}
	cands := d["counters"].(map[string]any)["candidates"].([]any)
	if d["frames"] != 30.0 || len(cands) != 1 {
		t.Fatalf("counters %v", d["counters"])
	}
	if f := cands[0].(map[string]any)["field"].(map[string]any); f["start_bit"] != 16.0 || f["length"] != 8.0 || cands[0].(map[string]any)["score"] != 1.0 {
		t.Errorf("counter %v", cands[0])
	}

	_, env = c.call("can_re_correlate", map[string]any{"id": "0CF00203", "candidates": []any{map[string]any{"start_bit": 8, "length": 16}},
		"ref_id": "18FEF100", "ref_start_bit": 8, "ref_length": 16})
	r := data(env)["results"].([]any)[0].(map[string]any)
	if r["pairs"] != 2999.0 || r["r"] != 0.998459 || math.Abs(r["slope"].(float64)-1.167159) > 5e-7 || math.Abs(r["intercept"].(float64)+172.927673) > 5e-7 {
		t.Errorf("correlation %v", r)
	}
	_, env = c.call("can_re_correlate", map[string]any{"id": "0CF00203", "spn": 84})
	top := data(env)["results"].([]any)[0].(map[string]any)
	if f := top["field"].(map[string]any); f["start_bit"] != 8.0 || f["big_endian"] != false || top["r"].(float64) < 0.998 {
		t.Errorf("top candidate against SPN 84: %v", top)
	}

	for _, tc := range []struct {
		name, tool string
		args       map[string]any
		code, in   string
	}{
		{name: "an id the port never saw", tool: "can_re_analyse", args: map[string]any{"id": "123"}, code: CodeNotFound, in: "id"},
		{name: "no reference", tool: "can_re_correlate", args: map[string]any{"id": "0CF00203"}, code: CodeInvalidArgument, in: "spn"},
		{name: "two references", tool: "can_re_correlate", args: map[string]any{"id": "0CF00203", "spn": 84, "ref_id": "18FEF100"}, code: CodeInvalidArgument, in: "spn"},
		{name: "ref without its field", tool: "can_re_correlate", args: map[string]any{"id": "0CF00203", "ref_id": "18FEF100"}, code: CodeInvalidArgument, in: "ref_start_bit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, env := c.call(tc.tool, tc.args)
			if code, msg, _ := firstError(t, env); code != tc.code || !strings.Contains(msg, tc.in) {
				t.Errorf("%s %s, want %s naming %s", code, msg, tc.code, tc.in)
			}
		})
	}
}
