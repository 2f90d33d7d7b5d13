package j1939

import (
	"testing"
	"time"

	"fieldtap/drivers/wire"
	"fieldtap/services/canbus"
	"fieldtap/services/ring"
)

// fuzzIDs are the identifiers the window views care about, so random
// payloads reach every branch: claims, requests, acks, DM1/2/3/11, TP.
var fuzzIDs = [...]uint32{
	0x18EEFF00, 0x18EEFFF9, 0x18EA00F9, 0x18EAFFF9, 0x18E8FF00, 0x18E8FF0B,
	0x18FECA00, 0x18FECB00, 0x18FECCF9, 0x18FED3F9, 0x1CECFF00, 0x1CEBFF00,
	0x1CEC00F9, 0x1CECF900, 0x1CEB00F9, 0x0CF00400,
}

// FuzzWindowViews builds a port from arbitrary frames and runs every
// window view over it: none may panic, and their counts must agree with
// their lists.
func FuzzWindowViews(f *testing.F) {
	f.Add([]byte{8, 10, 0xD3, 0xFE, 0, 0, 0, 0, 0, 0, 4, 5, 0, 0xFF, 0xFF, 0xFF, 0xF9, 0xD3, 0xFE, 0})
	f.Add([]byte{10, 1, 32, 20, 0, 3, 0xFF, 0xCA, 0xFE, 0, 11, 1, 1, 2, 3, 4, 5, 6, 7, 8})
	f.Fuzz(func(t *testing.T, b []byte) {
		cs, _ := canbus.New(ring.Limits{Items: 4096, Bytes: 4096 * 64})
		p, _ := cs.Port("can0", 0)
		at := d0
		for len(b) >= 2 {
			n := min(int(b[1])%9, len(b)-2)
			p.Add(at, fuzzIDs[int(b[0])%len(fuzzIDs)]|wire.CANEFF, b[2:2+n])
			at = at.Add(time.Duration(b[1]) * 10 * time.Millisecond)
			b = b[2+n:]
		}
		d := DiagnosticsOf("can0", p.Frames(), Window{}, nil)
		if d.ChangesTotal < len(d.Changes) || d.ClearsTotal < len(d.Clears) || len(d.Clears) > MaxClears {
			t.Fatalf("diagnostics counts %d/%d, %d/%d", d.ChangesTotal, len(d.Changes), d.ClearsTotal, len(d.Clears))
		}
		for _, c := range d.Clears {
			if len(c.Acks) > MaxAcksPerClear {
				t.Fatalf("clear %+v", c)
			}
		}
		top := TopologyOf("can0", p.Frames(), Window{}, nil)
		if len(top.Edges) > MaxTopologyEdges {
			t.Fatalf("%d edges", len(top.Edges))
		}
		c := Compare(Side{Port: "a", Frames: p.Frames()}, Side{Port: "a", Frames: p.Frames()})
		if c.New+c.Vanished+c.Changed != 0 {
			t.Fatalf("self comparison found changes: %+v", c)
		}
		if _, err := SPNHistory("can0", p.Frames(), HistoryQuery{SPN: 190, Buckets: 7}, nil); err != nil {
			t.Fatal(err)
		}
	})
}
