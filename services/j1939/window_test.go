package j1939

import (
	"testing"

	"fieldtap/services/canbus/canbustest"
	"fieldtap/services/dbc"
	"fieldtap/tools/refdata"
)

// TestDBCOverTransfers decodes the reassembled EC1 transfers (PGN 65251,
// 28 bytes by BAM) of css_j1939_FCBF0606.log with CSS Electronics'
// tp_j1939.dbc, whose EC1 message is 40 bytes with EngineSpeedAtPoint5 at
// bit 96. The numbers come from testdata/tp_signal.py (stdlib python3,
// its own BAM reassembly and bit extraction), run once:
//
//	python3 services/j1939/testdata/tp_signal.py ../shared/testdata/can/css_j1939_FCBF0606.log 65251 96 16 0.125
//	transfers=13  value=1566.5x12  value=1600.0x1
func TestDBCOverTransfers(t *testing.T) {
	const transfers = 13
	want := map[float64]int{1566.5: 12, 1600: 1}
	raw := readLines(t, "css_tp_j1939.dbc")
	var text []byte
	for _, l := range raw {
		text = append(append(text, l...), '\n')
	}
	db, err := dbc.Parse("css_tp_j1939.dbc", text)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := canbustest.Load(t, refdata.File(t, "can", "css_j1939_FCBF0606.log"), "can0")
	w, err := db.DecodeWindow(Payloads(p.Frames(), Window{}), dbc.WindowQuery{Limit: dbc.MaxWindowRows})
	if err != nil {
		t.Fatal(err)
	}
	if w.Decoded != transfers || len(w.Messages) != 1 || w.Messages[0].Transfers != transfers || w.Messages[0].Frames != 0 {
		t.Fatalf("decoded %d, tallies %+v", w.Decoded, w.Messages)
	}
	got := map[float64]int{}
	for _, r := range w.Rows {
		if r.Via != "tp-BAM" || r.Match != "transfer-pgn" || r.ID != "18FEE300" || len(r.Signals) != 1 || r.Signals[0].Value == nil {
			t.Fatalf("row %+v", r)
		}
		got[*r.Signals[0].Value]++
	}
	for v, n := range want {
		if got[v] != n {
			t.Errorf("EngineSpeedAtPoint5 %v seen %d times, want %d (all: %v)", v, got[v], n, got)
		}
	}
}
