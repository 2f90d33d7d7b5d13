package mcp

import (
	"math"
	"slices"
	"strings"
	"testing"

	"fieldtap/board/sim/j1939gen"
	"fieldtap/tools/refdata"
)

func j1939DiagChecker(t *testing.T, feeds ...portFrames) *checker {
	t.Helper()
	return newChecker(t, testServer(t, vehiclePorts(t, t.TempDir(), feeds...), j1939DiagTools...))
}

func refLog(t *testing.T, port, file string) portFrames {
	t.Helper()
	return portFrames{port, candumpFrames(t, refdata.File(t, "can", file))}
}

func onePort(t *testing.T, env map[string]any) map[string]any {
	t.Helper()
	ps := data(env)["ports"].([]any)
	if len(ps) != 1 {
		t.Fatalf("%d ports in %v", len(ps), env)
	}
	return ps[0].(map[string]any)
}

// The sim truck's workshop session reads DM2 (oil pressure low, SPN 100
// FMI 1, seen twice) and clears DM1 with a DM11 request from the service
// tool (0xF9) to the engine, which acknowledges; the coolant fault it
// clears comes back ReDetect later.
func TestJ1939DiagnosticsOnTheSimTruck(t *testing.T) {
	c := j1939DiagChecker(t, portFrames{"can0", simTruck(t)})
	_, env := c.call("j1939_diagnostics", map[string]any{})
	p := onePort(t, env)
	clears := p["clears"].([]any)
	if len(clears) != 1 {
		t.Fatalf("clears %v, want the workshop's one DM11", clears)
	}
	cl := clears[0].(map[string]any)
	if cl["kind"] != "DM11" || cl["via"] != "request" || cl["requester_sa"] != float64(j1939gen.ToolAddress) || cl["target_sa"] != float64(j1939gen.EngineAddress) {
		t.Errorf("clear %v", cl)
	}
	acks := cl["acks"].([]any)
	if len(acks) != 1 || acks[0].(map[string]any)["control"] != "ack" || acks[0].(map[string]any)["from_sa"] != float64(j1939gen.EngineAddress) {
		t.Errorf("acks %v", acks)
	}
	tg := cl["targets"].([]any)[0].(map[string]any)
	if len(tg["cleared"].([]any)) != 1 || len(tg["remaining"].([]any)) != 0 {
		t.Errorf("clear target %v: want the one active fault cleared", tg)
	}
	var dm2 map[string]any
	for _, s := range p["sources"].([]any) {
		if s := s.(map[string]any); s["sa"] == float64(j1939gen.EngineAddress) {
			dm2, _ = s["dm2"].(map[string]any)
		}
	}
	if dm2 == nil {
		t.Fatal("no DM2 from the engine")
	}
	dtcs := dm2["dtcs"].([]any)
	if len(dtcs) != 1 || dtcs[0].(map[string]any)["spn"] != float64(j1939gen.PreviousSPN) || dtcs[0].(map[string]any)["fmi"] != float64(j1939gen.PreviousFMI) ||
		dtcs[0].(map[string]any)["oc"] != float64(j1939gen.PreviousOccurrences) {
		t.Errorf("engine DM2 %v", dm2)
	}

	_, env = c.call("j1939_topology", map[string]any{"port": "can0"})
	var sas []int
	for _, n := range onePort(t, env)["nodes"].([]any) {
		sas = append(sas, int(n.(map[string]any)["sa"].(float64)))
	}
	want := []int{j1939gen.EngineAddress, j1939gen.TransmissionAddress, j1939gen.BrakesAddress, j1939gen.BodyAddress, j1939gen.ToolAddress}
	if !slices.Equal(sas, want) {
		t.Errorf("nodes %v, want %v", sas, want)
	}
}

// j1939atk_normal.log against services/j1939/testdata/j1939_window.py
// (stdlib python: its own reader, id split and TP reassembly), as
// services/j1939/views_test.go carries the numbers:
//
//	history: sa=0 valid=1499 min=1147.25 max=1786.125 last=1526.375 sum=2179116.5
//	topology: nodes=6 frames=19957 request_edges=6 requests=13 transfer_edges=4 announcements=44
//	dm1: sa=0 appeared=3, sa=49 appeared=4 gone=4
func TestJ1939DiagOnAReferenceLog(t *testing.T) {
	c := j1939DiagChecker(t, refLog(t, "can0", "j1939atk_normal.log"))
	const valid, lo, hi, last, sum = 1499, 1147.25, 1786.125, 1526.375, 2179116.5
	_, env := c.call("j1939_spn_history", map[string]any{"spn": 190, "buckets": 30})
	if p := data(env)["param"].(map[string]any); p["source"] != "builtin" || p["name"] == nil || p["dbc_name"] != nil {
		t.Errorf("param %v", p)
	}
	srcs := onePort(t, env)["sources"].([]any)
	if len(srcs) != 1 {
		t.Fatalf("sources %v", srcs)
	}
	s := srcs[0].(map[string]any)
	if s["sa"] != 0.0 || s["valid"] != float64(valid) || s["min"] != lo || s["max"] != hi || s["last"] != last ||
		math.Abs(s["mean"].(float64)-sum/valid) > 1e-6 || len(s["series"].([]any)) != 30 {
		t.Errorf("SPN 190 of SA 0: %v", s)
	}

	_, env = c.call("j1939_topology", map[string]any{})
	top := onePort(t, env)
	frames := 0.0
	for _, n := range top["nodes"].([]any) {
		frames += n.(map[string]any)["frames"].(float64)
	}
	var reqEdges, reqs, tpEdges, annc float64
	for _, e := range top["edges"].([]any) {
		e := e.(map[string]any)
		if e["kind"] == "request" {
			reqEdges++
			reqs += e["count"].(float64)
		} else {
			tpEdges++
			annc += e["count"].(float64)
		}
	}
	if len(top["nodes"].([]any)) != 6 || frames != 19957 || reqEdges != 6 || reqs != 13 || tpEdges != 4 || annc != 44 {
		t.Errorf("topology: %d nodes %v frames, %v request edges (%v), %v transfer edges (%v)", len(top["nodes"].([]any)), frames, reqEdges, reqs, tpEdges, annc)
	}

	_, env = c.call("j1939_diagnostics", map[string]any{})
	appeared, gone := map[float64]int{}, map[float64]int{}
	for _, ch := range onePort(t, env)["dtc_changes"].([]any) {
		ch := ch.(map[string]any)
		if ch["change"] == "appeared" {
			appeared[ch["sa"].(float64)]++
		} else {
			gone[ch["sa"].(float64)]++
		}
	}
	if appeared[0] != 3 || appeared[49] != 4 || gone[49] != 4 || len(appeared) != 2 || len(gone) != 1 {
		t.Errorf("DM1 changes appeared %v gone %v", appeared, gone)
	}

	_, env = c.call("j1939_spn_history", map[string]any{"spn": 524287})
	if code, msg, _ := firstError(t, env); code != CodeNotFound || !strings.Contains(msg, "524287") {
		t.Errorf("unknown SPN: %s %s", code, msg)
	}
}

// Two captures are two ports. Numbers from
//
//	python3 services/j1939/testdata/j1939_window.py compare cytr_candump-2021-10-14_234124.log j1939atk_normal.log
//
// pairs new 67, vanished 12, changed 5, same 18; ids new 70, vanished 15;
// sources new 3 5 11 41 49, vanished 15.
func TestJ1939CompareTwoCaptures(t *testing.T) {
	c := j1939DiagChecker(t, refLog(t, "file1", "cytr_candump-2021-10-14_234124.log"), refLog(t, "file2", "j1939atk_normal.log"))
	_, env := c.call("j1939_compare", map[string]any{"port": "file1", "port_b": "file2"})
	d := data(env)
	if d["pairs_new"] != 67.0 || d["pairs_vanished"] != 12.0 || d["pairs_changed"] != 5.0 || d["pairs_same"] != 18.0 ||
		d["ids_new_total"] != 70.0 || d["ids_vanished_total"] != 15.0 {
		t.Errorf("comparison counts %v %v %v %v ids %v %v", d["pairs_new"], d["pairs_vanished"], d["pairs_changed"], d["pairs_same"], d["ids_new_total"], d["ids_vanished_total"])
	}
	if sn := d["sources_new"].([]any); len(sn) != 5 || sn[0] != 3.0 || sn[4] != 49.0 {
		t.Errorf("sources new %v", sn)
	}
	_, env = c.call("j1939_compare", map[string]any{})
	if code, msg, _ := firstError(t, env); code != CodeInvalidArgument || !strings.Contains(msg, "file1, file2") {
		t.Errorf("no port with two: %s %s", code, msg)
	}
	_, env = c.call("j1939_compare", map[string]any{"port": "file2"})
	d = data(env)
	if d["pairs_new"] != 0.0 || d["pairs_vanished"] != 0.0 || d["pairs_changed"] != 0.0 || len(env["warnings"].([]any)) != 1 {
		t.Errorf("a capture against itself: %v %v %v, warnings %v", d["pairs_new"], d["pairs_vanished"], d["pairs_changed"], env["warnings"])
	}
}
