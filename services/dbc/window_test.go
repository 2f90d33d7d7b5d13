package dbc

import (
	"time"

	"testing"

	"fieldtap/services/canbus/canbustest"
	"fieldtap/tools/refdata"
)

// TestDecodeWindowJ1939Demo decodes a whole capture with the demo DBC.
// Independent numbers: GROUND_TRUTH.json for css_j1939_FCBF0606.log has
// 1815 frames, EEC1 (PGN 61444) ×577 and CCVS1 (65265) ×184, from several
// source addresses; the J1939 database matches them by PGN.
func TestDecodeWindowJ1939Demo(t *testing.T) {
	const frames, eec1, ccvs1 = 1815, 577, 184
	db, err := Parse("demo.dbc", readShared(t, "css_CSS-Electronics-SAE-J1939-DEMO.dbc"))
	if err != nil {
		t.Fatal(err)
	}
	p, _ := canbustest.Load(t, refdata.File(t, "can", "css_j1939_FCBF0606.log"), "can0")
	w, err := db.DecodeWindow(CANFrames(p.Frames(), zeroTime, zeroTime), WindowQuery{Limit: MaxWindowRows})
	if err != nil {
		t.Fatal(err)
	}
	if w.Seen != frames || w.Decoded != eec1+ccvs1 || w.Unmatched != frames-eec1-ccvs1 || w.Truncated || len(w.Rows) != eec1+ccvs1 {
		t.Fatalf("seen %d decoded %d unmatched %d rows %d truncated %v", w.Seen, w.Decoded, w.Unmatched, len(w.Rows), w.Truncated)
	}
	got := map[string]int{}
	for _, m := range w.Messages {
		got[m.Message] = m.Frames
	}
	if got["EEC1"] != eec1 || got["CCVS1"] != ccvs1 {
		t.Errorf("tallies %+v", w.Messages)
	}
	for _, r := range w.Rows {
		if r.Via != "direct" || len(r.Signals) != 1 || (r.Signals[0].Status == "ok") != (r.Signals[0].Value != nil) {
			t.Fatalf("row %+v", r)
		}
	}

	one, err := db.DecodeWindow(CANFrames(p.Frames(), zeroTime, zeroTime), WindowQuery{Messages: []string{"CCVS1"}, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if one.Decoded != ccvs1 || len(one.Rows) != 10 || !one.Truncated || one.Rows[0].Match != "j1939-pgn" {
		t.Errorf("CCVS1 only: decoded %d rows %d truncated %v", one.Decoded, len(one.Rows), one.Truncated)
	}
	if _, err := db.DecodeWindow(CANFrames(p.Frames(), zeroTime, zeroTime), WindowQuery{Limit: MaxWindowRows + 1}); err == nil {
		t.Error("a limit over the bound was accepted")
	}
}

var zeroTime time.Time
