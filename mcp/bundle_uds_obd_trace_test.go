package mcp

import (
	"encoding/hex"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"fieldtap/board/sim/obdgen"
	"fieldtap/drivers/wire"
	"fieldtap/mcp/untrusted"
)

// obdSession is the generated scan-tool session, then one frame on an
// unrelated id 10 s later: by then every functional request has waited
// out its answers and the store has ended it.
func obdSession(t *testing.T) []vehicleFrame {
	t.Helper()
	var out []vehicleFrame
	err := obdgen.Generate(obdgen.Options{Start: time.Unix(1.7e9, 0).UTC()}, func(f obdgen.Frame) error {
		id := f.ID
		if f.Extended {
			id |= wire.CANEFF
		}
		out = append(out, vehicleFrame{t: f.Time, id: id, data: f.Data})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return append(out, vehicleFrame{t: out[len(out)-1].t.Add(10 * time.Second), id: 0x123, data: []byte{1}})
}

// obdFormula is SAE J1979's formula for a PID, written here from the
// Wikipedia table "OBD-II PIDs" independently of services/obd, over the
// raw bytes the row carries. python-OBD (github.com/brendan-w/python-OBD,
// obd/decoders.py at 3cb7b2a4) decodes the same: percent A*100/255,
// percent_centered (A-128)*100/128, temp A-40, timing_advance (A-128)/2,
// fuel_rate (256A+B)*0.05, fuel_pressure 3A, and parse_dtc's P/C/B/U from
// the top two bits.
func obdFormula(pid string, b []byte) (float64, bool) {
	A, B := float64(b[0]), 0.0
	if len(b) > 1 {
		B = float64(b[1])
	}
	switch pid {
	case "0x04", "0x11", "0x2F":
		return 100 / 255.0 * A, true
	case "0x05", "0x0F", "0x46", "0x5C":
		return A - 40, true
	case "0x06", "0x07", "0x08", "0x09":
		return 100/128.0*A - 100, true
	case "0x0B", "0x0D", "0x33":
		return A, true
	case "0x0C":
		return (256*A + B) / 4, true
	case "0x0E":
		return A/2 - 64, true
	case "0x10":
		return (256*A + B) / 100, true
	case "0x1F", "0x21", "0x31":
		return 256*A + B, true
	case "0x42":
		return (256*A + B) / 1000, true
	case "0x5E":
		return (256*A + B) / 20, true
	case "0xA6":
		return (A*16777216 + B*65536 + float64(b[2])*256 + float64(b[3])) / 10, true
	}
	return 0, false
}

// TestOBDTraceOnAGeneratedSession: every mode 01 row's value equals the
// test's own formula over the row's raw bytes and the physical value the
// generator encoded; VIN comes fenced from the 11-bit and the 29-bit
// engine; DTCs are written as a technician writes them; the refusal is
// named; the filters and a bad mode argument.
func TestOBDTraceOnAGeneratedSession(t *testing.T) {
	c := newChecker(t, testServer(t, vehicleDeps(t, t.TempDir(), obdSession(t)), udsTools...))
	rows := walkPages(t, c, "obd_trace", map[string]any{"limit": 7})
	want := map[string]float64{}
	for _, r := range obdgen.Readings {
		want[fmt.Sprintf("0x%02X", r.PID)] = r.Value
	}
	checked, vins, codes := 0, 0, []string{}
	for _, r := range rows {
		if p, _ := r["problem"].(string); p != "" {
			t.Errorf("row %v: %s", r, p)
		}
		rawHex, _ := r["raw"].(string)
		raw, _ := hex.DecodeString(rawHex)
		pid, _ := r["pid"].(string)
		_, generated := want[pid]
		switch {
		case r["mode"] == "0x01" && generated:
			f, ok := obdFormula(pid, raw)
			v, isNum := r["value"].(float64)
			if !ok || !isNum || math.Abs(f-v) > 1e-9 || math.Abs(v-want[pid]) > 1e-6 {
				t.Errorf("PID %s %s: %v %s, formula %v, generated %v", pid, r["name"], r["value"], r["unit"], f, want[pid])
			}
			checked++
		case pid == "0x02" && r["mode"] == "0x09":
			if r["text"] != untrusted.Open+obdgen.VIN+untrusted.Close {
				t.Errorf("VIN text %v", r["text"])
			}
			vins++
		case strings.HasSuffix(fmt.Sprint(r["name"]), " DTC"):
			codes = append(codes, fmt.Sprintf("%s %s %s", r["ecu"], r["mode"], r["code"]))
		}
	}
	if checked != len(obdgen.Readings)+1 || vins != 2 { // 0x0D once more from the 29-bit engine
		t.Errorf("%d mode 01 values checked, want %d; %d VINs, want 2", checked, len(obdgen.Readings)+1, vins)
	}
	if got := strings.Join(codes, ", "); got != "7E8 0x03 P0301, 7E8 0x03 U0123, 7E8 0x07 P0420, 18DAF110 0x03 P0171" {
		t.Errorf("DTCs %s", got)
	}

	_, env := c.call("obd_trace", map[string]any{"mode": "09", "pid": "0x02"})
	if got := items(env); len(got) != 2 || got[0]["ecu"] != "7E8" || got[1]["ecu"] != "18DAF110" || got[1]["tester"] != "18DA10F1" {
		t.Errorf("mode 09 pid 02: %v", got)
	}
	_, env = c.call("obd_trace", map[string]any{"ecu": "18DAF110"})
	if got := items(env); len(got) != 5 {
		t.Errorf("ecu 18DAF110: %d rows, want 5 (bitmap, speed, VIN, DTC count, DTC): %v", len(got), got)
	}
	_, env = c.call("obd_trace", map[string]any{"mode": "0x09", "ecu": "7E8", "fields": []any{"pid", "nrc", "nrc_name"}})
	refused := 0
	for _, r := range items(env) {
		if r["nrc"] != nil {
			refused++
			if r["nrc"] != "0x31" || r["nrc_name"] != "requestOutOfRange" {
				t.Errorf("refusal %v", r)
			}
		}
	}
	if refused != 1 {
		t.Errorf("%d refusals, want 1", refused)
	}
	_, env = c.call("obd_trace", map[string]any{"until": time.Unix(1.7e9, 0).UTC().Add(time.Second).Format(time.RFC3339Nano)})
	for _, r := range items(env) {
		if r["mode"] == "0x09" {
			t.Errorf("a mode 09 row before the first second: %v", r)
		}
	}
	r, _ := c.call("obd_trace", map[string]any{"mode": "05"})
	if !r.IsError || !strings.Contains(r.Content[0].Text, "mode") {
		t.Errorf("mode 05 answered %+v", r)
	}
	c.everyProjection("obd_trace", map[string]any{"limit": 3})
}
