package mcp

import (
	"math"
	"strings"
	"testing"
	"time"

	"fieldtap/board/sim/j1939gen"
	"fieldtap/mcp/untrusted"
	"fieldtap/tools/refdata"
)

// The sim truck's workshop session (docs/uds.md): 9 requests over normal
// fixed addressing from the service tool 0xF9 to the engine, 7 positive,
// one refused with NRC 0x31, one TesterPresent with the suppress bit; the
// VIN read back (F190) is ECU text and comes fenced.
func TestUDSTraceOnTheSimTruck(t *testing.T) {
	c := newChecker(t, testServer(t, vehicleDeps(t, t.TempDir(), simTruck(t)), udsTools...))
	rows := walkPages(t, c, "uds_trace", map[string]any{"limit": 4})
	if len(rows) != j1939gen.WorkshopRequests {
		t.Fatalf("%d transactions, want %d", len(rows), j1939gen.WorkshopRequests)
	}
	status := map[string]int{}
	seen := map[float64]bool{}
	vin := false
	for _, r := range rows {
		status[r["status"].(string)]++
		if id := r["id"].(float64); seen[id] {
			t.Errorf("transaction %v listed twice across pages", id)
		}
		seen[r["id"].(float64)] = true
		if r["did"] == "0xF190" {
			txt, _ := r["data_text"].(string)
			vin = txt == untrusted.Open+j1939gen.VIN+untrusted.Close
			if !vin {
				t.Errorf("VIN answer data_text = %q, want the fenced VIN", txt)
			}
		}
	}
	want := map[string]int{"positive": j1939gen.WorkshopRequests - j1939gen.WorkshopNegative - j1939gen.WorkshopSuppressed,
		"negative": j1939gen.WorkshopNegative, "suppressed": j1939gen.WorkshopSuppressed}
	for k, n := range want {
		if status[k] != n {
			t.Errorf("%s: %d, want %d (all: %v)", k, status[k], n, status)
		}
	}
	if !vin {
		t.Error("no ReadDataByIdentifier F190 (VIN) in the trace")
	}
	r, env := c.call("uds_trace", map[string]any{"status": "negative"})
	neg := items(env)
	if len(neg) != 1 || neg[0]["nrc"] != "0x31" || neg[0]["nrc_name"] != "requestOutOfRange" {
		t.Fatalf("negative transactions %v", neg)
	}
	if strings.Contains(r.Content[len(r.Content)-1].Text, "Provenance") {
		t.Error("an answer with no ECU text carries a provenance note")
	}
	// The did filter reads hex with or without 0x, in either case.
	for _, did := range []string{"0xF190", "f190"} {
		_, env = c.call("uds_trace", map[string]any{"did": did, "sid": "22"})
		if got := items(env); len(got) != 1 || got[0]["did"] != "0xF190" || got[0]["did_name"] != "VIN" || got[0]["sid"] != "0x22" {
			t.Errorf("did=%s: %v, want the one VIN read", did, got)
		}
	}

	_, env = c.call("uds_services", map[string]any{})
	data := env["data"].(map[string]any)
	ecus := data["ecus"].([]any)
	if len(ecus) != 1 {
		t.Fatalf("ecus %v, want the engine alone", ecus)
	}
	e := ecus[0].(map[string]any)
	if e["source_address"] != float64(j1939gen.EngineAddress) || e["can_id"] != "18DAF900" {
		t.Errorf("ECU %v, want the engine answering on 18DAF900", e)
	}
	var reqs, negs, nrc31 float64
	reads := map[string]float64{}
	for _, s := range e["services"].([]any) {
		s := s.(map[string]any)
		if s["sid"] == "0x22" {
			reads[s["did"].(string)] += s["requests"].(float64)
		}
		reqs += s["requests"].(float64)
		negs += s["negative"].(float64)
		for _, n := range s["nrcs"].([]any) {
			if n := n.(map[string]any); n["nrc"] == "0x31" && n["name"] == "requestOutOfRange" {
				nrc31 += n["count"].(float64)
			}
		}
	}
	if reqs != j1939gen.WorkshopRequests || negs != 1 || nrc31 != 1 {
		t.Errorf("services tally %v requests, %v negative, %v NRC 0x31", reqs, negs, nrc31)
	}
	// "Which DIDs did the tester read on which ECU": one row per DID.
	if len(reads) < 3 || reads["0xF190"] != 1 || reads["0xF18C"] != 1 || reads["0xF186"] != 1 {
		t.Errorf("ReadDataByIdentifier tallies by DID %v, want F190, F18C and F186 once each", reads)
	}
	if n := len(data["services_reference"].([]any)); n != 0 {
		t.Errorf("reference tables without reference=true: %d services", n)
	}
	_, env = c.call("uds_services", map[string]any{"reference": true})
	ref := env["data"].(map[string]any)
	// docs/uds.md: 43 services, 40 NRCs, 22 DIDs in the reference tables.
	if len(ref["services_reference"].([]any)) != 43 || len(ref["nrcs_reference"].([]any)) != 40 || len(ref["dids_reference"].([]any)) != 22 {
		t.Errorf("reference tables: %d services, %d NRCs, %d DIDs", len(ref["services_reference"].([]any)), len(ref["nrcs_reference"].([]any)), len(ref["dids_reference"].([]any)))
	}
}

// The Nissan Leaf log (../shared/testdata/can): the numbers are
// services/isotp/testdata/uds_count.py's (stdlib python, its own parser,
// reassembly and pairing), as TestTraceNissanLeaf carries them: 26
// KWP2000 ReadDataByLocalIdentifier requests on 0x79B, all answered on
// 0x7BB, 13 for local identifier 01 and 13 for 04, response times
// 1.600–15.250 ms summing to 192.100 ms.
func TestUDSOnTheNissanLeaf(t *testing.T) {
	frames := candumpFrames(t, refdata.File(t, "can", "css_uds_nissan_leaf_2F6913DB.log"))
	c := newChecker(t, testServer(t, vehicleDeps(t, t.TempDir(), frames), udsTools...))
	const (
		requests         = 26
		lid01, lid04     = 13, 13
		minMs, maxMs     = 1.600, 15.250
		sumMs            = 192.100
		serviceKWP, ecus = "0x21", 1
	)
	for _, from := range []string{"store", "frames"} {
		rows := walkPages(t, c, "uds_trace", map[string]any{"from": from, "limit": 10})
		if len(rows) != requests {
			t.Fatalf("from=%s: %d transactions, want %d", from, len(rows), requests)
		}
		lids := map[string]int{}
		for _, r := range rows {
			lids[r["did"].(string)]++
			if r["status"] != "positive" || r["sid"] != serviceKWP || r["did_kind"] != "local identifier" || r["service"] != "ReadDataByLocalIdentifier" {
				t.Errorf("from=%s: %v %v %v", from, r["status"], r["sid"], r["service"])
			}
		}
		if lids["0x01"] != lid01 || lids["0x04"] != lid04 {
			t.Errorf("from=%s: local identifiers %v", from, lids)
		}
	}
	_, env := c.call("uds_trace", map[string]any{"limit": 10})
	if pg := env["page"].(map[string]any); pg["total_matched"] != float64(requests) || pg["returned"] != 10.0 || pg["truncated"] != true {
		t.Errorf("page %v", pg)
	}
	_, env = c.call("uds_services", map[string]any{"port": "can0"})
	data := env["data"].(map[string]any)
	es := data["ecus"].([]any)
	if len(es) != ecus {
		t.Fatalf("ecus %v", es)
	}
	e := es[0].(map[string]any)
	if e["can_id"] != "7BB" || e["tester_can_id"] != "79B" {
		t.Errorf("ECU %v", e)
	}
	// One tally per (service, local identifier): 0x21 0x01 and 0x21 0x04,
	// whose times together are the script's.
	byLID := map[string]float64{}
	var positive, sum float64
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range e["services"].([]any) {
		s := s.(map[string]any)
		if s["sid"] != serviceKWP {
			t.Errorf("tally %v", s)
			continue
		}
		byLID[s["did"].(string)] += s["requests"].(float64)
		positive += s["positive"].(float64)
		sum += s["response_mean_ms"].(float64) * s["requests"].(float64)
		lo, hi = min(lo, s["response_min_ms"].(float64)), max(hi, s["response_max_ms"].(float64))
	}
	if len(byLID) != 2 || byLID["0x01"] != lid01 || byLID["0x04"] != lid04 || positive != requests {
		t.Errorf("tallies by local identifier %v, %v positive", byLID, positive)
	}
	if lo != minMs || hi != maxMs || math.Abs(sum-sumMs) > 1e-9 {
		t.Errorf("response times %v / %v / %v, want %v / %v / %v", lo, sum, hi, minMs, sumMs, maxMs)
	}
	port := data["ports"].([]any)[0].(map[string]any)
	if tr := port["transport"].(map[string]any); tr["pdus"] != 52.0 || tr["first_frames"] != 26.0 || tr["consecutive_frames"] != 143.0 {
		t.Errorf("transport %v: want 52 PDUs, 26 FF, 143 CF", tr)
	}
}

// withBroadcast adds, every 100 ms from the first frame's time on, the
// periodic status frame measured on a real car's 0x7BC (issue #33): byte
// 0 reads as a single frame of 7 bytes, byte 1 as a request's service id,
// 0x14 (ClearDiagnosticInformation) at every 64th frame from the 12th.
func withBroadcast(frames []vehicleFrame, n int) []vehicleFrame {
	out := make([]vehicleFrame, 0, len(frames)+n)
	start := frames[0].t
	i := 0
	for _, f := range frames {
		for ; i < n && !start.Add(time.Duration(i)*100*time.Millisecond).After(f.t); i++ {
			out = append(out, vehicleFrame{t: start.Add(time.Duration(i) * 100 * time.Millisecond), id: 0x7BC,
				data: []byte{0x07, byte(i * 7 % 0x40), 0x00, 0x3C, 0xFF, 0x00, 0x12, byte(i)}})
		}
		out = append(out, f)
	}
	return out
}

// TestUDSBroadcastIsNotDiagnostics: with a periodic broadcast on 0x7BC
// beside the Leaf's real session, the uds tools answer the session
// exactly as on the Leaf alone and no traffic on 0x7BC: no ECU whose
// tester is itself, 0x7BC listed as a rejected channel with its reason,
// and a warning naming it in both tools.
func TestUDSBroadcastIsNotDiagnostics(t *testing.T) {
	const requests, broadcast = 26, 282
	frames := withBroadcast(candumpFrames(t, refdata.File(t, "can", "css_uds_nissan_leaf_2F6913DB.log")), broadcast)
	c := newChecker(t, testServer(t, vehicleDeps(t, t.TempDir(), frames), udsTools...))
	warned := func(env map[string]any) bool {
		for _, w := range env["warnings"].([]any) {
			if s := w.(string); strings.Contains(s, "7BC (unpaired") && strings.Contains(s, "can0: 1 candidate ISO-TP channel") {
				return true
			}
		}
		return false
	}
	for _, from := range []string{"store", "frames"} {
		_, env := c.call("uds_trace", map[string]any{"from": from, "limit": 100})
		rows := items(env)
		if len(rows) != requests || !warned(env) {
			t.Errorf("from=%s: %d transactions (want the Leaf's %d), warnings %v", from, len(rows), requests, env["warnings"])
		}
		for _, r := range rows {
			if req := r["request"].(map[string]any); req["can_id"] != "79B" {
				t.Errorf("from=%s: a transaction from %v", from, req["can_id"])
			}
		}
	}
	_, env := c.call("uds_services", map[string]any{})
	data := env["data"].(map[string]any)
	for _, e := range data["ecus"].([]any) {
		e := e.(map[string]any)
		if e["can_id"] != "7BB" || e["tester_can_id"] != "79B" {
			t.Errorf("ECU %v %v, want only the Leaf's 7BB answering 79B", e["can_id"], e["tester_can_id"])
		}
	}
	rej := data["rejected_channels"].([]any)
	if len(rej) != 1 {
		t.Fatalf("rejected channels %v, want 0x7BC", rej)
	}
	if r := rej[0].(map[string]any); r["can_id"] != "7BC" || r["reason"] != "unpaired" || r["frames"] != float64(broadcast) || r["port"] != "can0" {
		t.Errorf("rejected channel %v", r)
	}
	port := data["ports"].([]any)[0].(map[string]any)
	if port["uds"].(map[string]any)["requests"] != float64(requests) || port["rejected_channels"].(map[string]any)["unpaired"] != 1.0 {
		t.Errorf("port %v", port)
	}
	if !warned(env) {
		t.Errorf("uds_services warnings %v", env["warnings"])
	}
}

// Arguments that cannot apply are refused in plain words.
func TestUDSTraceRefuses(t *testing.T) {
	c := newChecker(t, testServer(t, vehicleDeps(t, t.TempDir(), nil), udsTools...))
	for _, tc := range []struct {
		name string
		args map[string]any
		code string
		in   string
	}{
		{name: "ids on the store", args: map[string]any{"ids": []any{"7E0"}}, code: CodeInvalidArgument, in: "from=frames"},
		{name: "unknown port", args: map[string]any{"port": "can9"}, code: CodeInvalidArgument, in: "can0"},
		{name: "bad id", args: map[string]any{"from": "frames", "ids": []any{"xyz"}}, code: CodeInvalidArgument, in: "ids"},
		{name: "sid of two bytes", args: map[string]any{"sid": "0x122"}, code: CodeInvalidArgument, in: "more than one byte"},
		{name: "decimal-looking did", args: map[string]any{"did": "F190h"}, code: CodeInvalidArgument, in: "did"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, env := c.call("uds_trace", tc.args)
			code, msg, _ := firstError(t, env)
			if code != tc.code || !strings.Contains(msg, tc.in) {
				t.Errorf("%s %s, want %s naming %q", code, msg, tc.code, tc.in)
			}
		})
	}
	// A box without a CAN port has its stores, empty: nothing to show,
	// and no port to name.
	c2 := newChecker(t, testServer(t, fullDeps(t), udsTools...))
	for _, tool := range []string{"uds_trace", "uds_services"} {
		if r, env := c2.call(tool, map[string]any{}); r.IsError {
			t.Errorf("%s without a CAN port: %v", tool, env)
		}
		_, env := c2.call(tool, map[string]any{"port": "can0"})
		if code, msg, _ := firstError(t, env); code != CodeInvalidArgument || !strings.Contains(msg, "this box has no CAN port") {
			t.Errorf("%s on can0 without a CAN port: %s %s", tool, code, msg)
		}
	}
}
