package obd

import (
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"fieldtap/board/sim/obdgen"
	"fieldtap/drivers/wire"
	"fieldtap/services/canbus/canbustest"
	"fieldtap/services/isotp"
	"fieldtap/tools/refdata"
)

// traceSession runs the generated scan-tool session through the passive
// ISO-TP tracer, as the box overhears it, and returns its transactions.
func traceSession(t *testing.T) []isotp.Transaction {
	t.Helper()
	tr, err := isotp.NewTracer(isotp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var txs []isotp.Transaction
	tr.OnTransaction = func(tx *isotp.Transaction) { txs = append(txs, *tx) }
	var seq uint64
	var last time.Time
	err = obdgen.Generate(obdgen.Options{Start: time.Unix(1.7e9, 0)}, func(f obdgen.Frame) error {
		id := f.ID
		if f.Extended {
			id |= wire.CANEFF
		}
		tr.Feed(seq, f.Time, id, f.Data)
		seq, last = seq+1, f.Time
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	tr.Flush(last.Add(10 * time.Second))
	if c := tr.Counters(); c.Rejected != 0 || len(tr.Rejections()) != 0 {
		t.Fatalf("the tracer rejected OBD traffic: %+v, %+v", c, tr.Rejections())
	}
	return txs
}

// TestGeneratedSession: every request of the generated session is an OBD
// exchange, answered; every mode 01 reading decodes to the physical value
// the generator encoded by the inverse formula (within a thousandth of
// the formula's step); VIN, calibration id, CVN, ECU name, freeze frame,
// the three DTC lists and the negative response come back as sent, on
// 11-bit and 29-bit ids.
func TestGeneratedSession(t *testing.T) {
	txs := traceSession(t)
	if len(txs) != obdgen.Exchanges() {
		t.Fatalf("%d transactions, want %d", len(txs), obdgen.Exchanges())
	}
	type key struct {
		ecu       string
		mode      byte
		pid, name string
	}
	got := map[key][]Item{}
	for i := range txs {
		x, ok := Read(&txs[i])
		if !ok || x.Unanswered {
			t.Fatalf("transaction %+v: OBD %v, unanswered %v", txs[i], ok, x.Unanswered)
		}
		for _, it := range x.Items {
			if it.Problem != "" {
				t.Errorf("%s mode 0x%02X %s: %s", it.ECU, it.Mode, it.PID, it.Problem)
			}
			k := key{it.ECU, it.Mode, it.PID, it.Name}
			got[k] = append(got[k], it)
		}
	}
	one := func(k key) Item {
		t.Helper()
		if len(got[k]) != 1 {
			t.Fatalf("%+v: %d items, want 1", k, len(got[k]))
		}
		return got[k][0]
	}
	for _, r := range obdgen.Readings {
		def := pids[r.PID]
		it := one(key{"7E8", ModeCurrent, fmt.Sprintf("0x%02X", r.PID), def.name})
		if it.Value.Value == nil || math.Abs(*it.Value.Value-r.Value) > 1e-6 {
			t.Errorf("PID 0x%02X %s = %v %s, want %v", r.PID, def.name, it.Value.Value, it.Unit, r.Value)
		}
	}
	if it := one(key{"7E8", ModeCurrent, "0x01", "monitor status since DTCs cleared"}); *it.Value.Value != float64(len(obdgen.StoredDTCs)) || it.State != "MIL on" {
		t.Errorf("monitor status %v %s", *it.Value.Value, it.State)
	}
	if it := one(key{"7E9", ModeCurrent, "0x00", "PIDs supported"}); !slices.Equal(it.Supported, []string{"0x01", "0x0D"}) {
		t.Errorf("transmission's supported PIDs %v", it.Supported)
	}
	if it := one(key{"7E8", ModeFreeze, "0x0C", "engine speed"}); *it.Value.Value != obdgen.FreezeRPM || *it.Frame != obdgen.FreezeFrame {
		t.Errorf("freeze frame rpm %v frame %d", *it.Value.Value, *it.Frame)
	}
	if it := one(key{"7E8", ModeFreeze, "0x02", "DTC that caused the freeze frame"}); it.Code != obdgen.FreezeDTC {
		t.Errorf("freeze DTC %s", it.Code)
	}
	codes := func(ecu string, mode byte, name string) []string {
		out := []string{}
		for _, it := range got[key{ecu, mode, "", name}] {
			out = append(out, it.Code)
		}
		return out
	}
	for _, c := range []struct {
		ecu  string
		mode byte
		name string
		want []string
	}{
		{"7E8", ModeStored, "stored DTC", obdgen.StoredDTCs},
		{"7E9", ModeStored, "stored DTC", []string{}},
		{"7E8", ModePending, "pending DTC", obdgen.PendingDTCs},
		{"7E8", ModePermanent, "permanent DTC", obdgen.PermanentDTCs},
		{"18DAF110", ModeStored, "stored DTC", obdgen.Stored29DTCs},
	} {
		if g := codes(c.ecu, c.mode, c.name); !slices.Equal(g, c.want) {
			t.Errorf("%s %s: %v, want %v", c.ecu, c.name, g, c.want)
		}
		if n := one(key{c.ecu, c.mode, "", c.name + " count"}); *n.Value.Value != float64(len(c.want)) {
			t.Errorf("%s %s count %v, want %d", c.ecu, c.name, *n.Value.Value, len(c.want))
		}
	}
	for _, ecu := range []string{"7E8", "18DAF110"} {
		if it := one(key{ecu, ModeVehicle, "0x02", "VIN"}); it.Text != obdgen.VIN {
			t.Errorf("%s VIN %q, want %q", ecu, it.Text, obdgen.VIN)
		}
	}
	if it := one(key{"7E8", ModeVehicle, "0x04", "calibration ID"}); it.Text != obdgen.CalID {
		t.Errorf("calibration id %q", it.Text)
	}
	if it := one(key{"7E8", ModeVehicle, "0x06", "calibration verification number"}); it.Code != fmt.Sprintf("%08X", obdgen.CVN) {
		t.Errorf("CVN %s", it.Code)
	}
	if it := one(key{"7E8", ModeVehicle, "0x0A", "ECU name"}); it.Text != obdgen.ECUName {
		t.Errorf("ECU name %q", it.Text)
	}
	if it := one(key{"7E8", obdgen.RefusedMode, "", ""}); it.NRC != fmt.Sprintf("0x%02X", obdgen.RefusedNRC) || it.NRCName != "requestOutOfRange" {
		t.Errorf("negative answer %+v", it)
	}
	if it := one(key{"18DAF110", ModeCurrent, "0x0D", "vehicle speed"}); *it.Value.Value != 50 || it.Tester != "18DB33F1" {
		t.Errorf("29-bit speed %v from tester %s", *it.Value.Value, it.Tester)
	}
}

// A manufacturer's service on another id with an OBD service number is
// not OBD.
func TestIsOBDByID(t *testing.T) {
	tx := isotp.Transaction{SID: 0x01, Request: &isotp.Message{CANID: "79B"}}
	if IsOBD(&tx) {
		t.Error("a 0x01 request on 0x79B taken for OBD")
	}
	tx.Request.CANID = "18DB33F1"
	if !IsOBD(&tx) {
		t.Error("a 0x01 request on 0x18DB33F1 not taken for OBD")
	}
	tx = isotp.Transaction{SID: 0x22, Request: &isotp.Message{CANID: "7E0"}}
	if IsOBD(&tx) {
		t.Error("a UDS ReadDataByIdentifier on 0x7E0 taken for OBD")
	}
}

// TestNissanLeafIsNotOBD: the shared captures hold no OBD-II traffic (no
// 0x7DF, 0x7E0-0x7EF or 0x18DA/0x18DB ids with OBD modes, checked by
// grep over /work/shared/testdata/can). The Nissan Leaf log's 26
// diagnostic exchanges (KWP2000 0x21 on 0x79B, answers on 0x7BB) must not
// be read as OBD.
func TestNissanLeafIsNotOBD(t *testing.T) {
	p, skipped := canbustest.Load(t, refdata.File(t, "can", "css_uds_nissan_leaf_2F6913DB.log"), "can0")
	if skipped != 0 {
		t.Fatalf("%d lines not read", skipped)
	}
	tr, err := isotp.TraceFrames("can0", p.Frames(), isotp.Window{}, isotp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Transactions) != 26 {
		t.Fatalf("%d transactions, want the 26 of TestTraceNissanLeaf", len(tr.Transactions))
	}
	for i := range tr.Transactions {
		if x, ok := Read(&tr.Transactions[i]); ok {
			t.Errorf("transaction %d on %s read as OBD: %+v", tr.Transactions[i].ID, tr.Transactions[i].Request.CANID, x)
		}
	}
}
