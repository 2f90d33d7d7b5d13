package simecu

import (
	"bytes"
	"testing"

	"fieldtap/board/sim/j1939gen"
	"fieldtap/drivers/wire"
)

// TestVINByBAM: a Request for PGN 65260 to the engine or to everyone is
// answered by a BAM to global whose packets carry the VIN and '*'.
func TestVINByBAM(t *testing.T) {
	for _, da := range []byte{Address, 0xFF} {
		rs := New().Handle(wire.CANEFF|0x18EA00FA|uint32(da)<<8, []byte{0xEC, 0xFE, 0x00})
		if len(rs) != 4 || rs[0].ID != wire.CANEFF|0x1CECFF00 || !bytes.Equal(rs[0].Data, []byte{0x20, 18, 0, 3, 0xFF, 0xEC, 0xFE, 0x00}) {
			t.Fatalf("da %02X: %+v, want a BAM of 18 bytes in 3 packets", da, rs)
		}
		var got []byte
		for i, r := range rs[1:] {
			if r.ID != wire.CANEFF|0x1CEBFF00 || r.Data[0] != byte(i+1) || r.Delay != BAMGap {
				t.Errorf("packet %d: %+v", i+1, r)
			}
			got = append(got, r.Data[1:]...)
		}
		if string(got[:18]) != j1939gen.VIN+"*" {
			t.Errorf("da %02X: VIN %q", da, got[:18])
		}
	}
}

// TestDMsAndNACK: DM1 and DM2 carry the generated engine's faults; an
// unknown PGN is NACKed when asked of the engine alone and ignored when
// asked of everyone; requests to another address go unanswered.
func TestDMsAndNACK(t *testing.T) {
	e := New()
	if rs := e.Handle(wire.CANEFF|0x18EA00FA, []byte{0xCA, 0xFE, 0x00}); len(rs) != 1 || rs[0].ID != wire.CANEFF|0x18FECA00 || !bytes.Equal(rs[0].Data, j1939gen.ActiveDM1()) {
		t.Errorf("DM1: %+v", rs)
	}
	if dm1 := j1939gen.ActiveDM1(); dm1[2] != j1939gen.FaultSPN || dm1[4]&0x1F != j1939gen.FaultFMI || dm1[5] != j1939gen.FaultOccurrences {
		t.Errorf("DM1 % X, want SPN %d FMI %d", dm1, j1939gen.FaultSPN, j1939gen.FaultFMI)
	}
	if rs := e.Handle(wire.CANEFF|0x18EAFFFA, []byte{0xCB, 0xFE, 0x00}); len(rs) != 1 || rs[0].ID != wire.CANEFF|0x18FECB00 || rs[0].Data[2] != j1939gen.PreviousSPN {
		t.Errorf("DM2: %+v", rs)
	}
	if rs := e.Handle(wire.CANEFF|0x18EA00FA, []byte{0x00, 0xEF, 0x00}); len(rs) != 1 || rs[0].ID != wire.CANEFF|0x18E8FF00 || !bytes.Equal(rs[0].Data, []byte{1, 0xFF, 0xFF, 0xFF, 0xFA, 0x00, 0xEF, 0x00}) {
		t.Errorf("NACK: %+v", rs)
	}
	if rs := e.Handle(wire.CANEFF|0x18EAFFFA, []byte{0x00, 0xEF, 0x00}); rs != nil {
		t.Errorf("global request for an unknown PGN answered: %+v", rs)
	}
	if rs := e.Handle(wire.CANEFF|0x18EA03FA, []byte{0xEC, 0xFE, 0x00}); rs != nil {
		t.Errorf("request to the transmission answered by the engine: %+v", rs)
	}
}

// TestUDS: single-frame answers, a first frame whose consecutive frames
// wait for the tester's flow control (block size honoured), the session
// change with P2 timings and negative answers.
func TestUDS(t *testing.T) {
	e := New()
	ask := func(req ...byte) []Reply {
		return e.Handle(RequestID, padded(append([]byte{byte(len(req))}, req...)))
	}
	rs := ask(0x22, 0xF1, 0x90)
	if len(rs) != 1 || rs[0].ID != ResponseID || !bytes.Equal(rs[0].Data, []byte{0x10, 20, 0x62, 0xF1, 0x90, '1', 'F', 'U'}) {
		t.Fatalf("F190 first frame: %+v", rs)
	}
	if e.FlowControls() != 0 {
		t.Error("flow control counted before one was sent")
	}
	rs = e.Handle(RequestID, []byte{0x30, 1, 0, pad, pad, pad, pad, pad}) // one frame, then wait
	if len(rs) != 1 || rs[0].Data[0] != 0x21 {
		t.Fatalf("block size 1: %+v", rs)
	}
	rs2 := e.Handle(RequestID, []byte{0x30, 0, 20, pad, pad, pad, pad, pad})
	if len(rs2) != 1 || rs2[0].Data[0] != 0x22 || rs2[0].Delay != 20_000_000 {
		t.Fatalf("rest at STmin 20 ms: %+v", rs2)
	}
	got := append(append([]byte{}, rs[0].Data[1:]...), rs2[0].Data[1:]...)
	if string(got[:14]) != j1939gen.VIN[3:] || e.FlowControls() != 2 {
		t.Errorf("VIN tail %q, flow controls %d", got, e.FlowControls())
	}
	for _, c := range []struct {
		req  []byte
		want []byte
	}{
		{[]byte{0x10, 0x03}, []byte{6, 0x50, 0x03, 0x00, 0x32, 0x01, 0xF4, pad}},
		{[]byte{0x22, 0xF1, 0x86}, []byte{4, 0x62, 0xF1, 0x86, 0x03, pad, pad, pad}},
		{[]byte{0x10, 0x02}, []byte{3, 0x7F, 0x10, 0x12, pad, pad, pad, pad}},
		{[]byte{0x22, 0x01, 0x23}, []byte{3, 0x7F, 0x22, 0x31, pad, pad, pad, pad}},
		{[]byte{0x27, 0x01}, []byte{3, 0x7F, 0x27, 0x11, pad, pad, pad, pad}},
		{[]byte{0x3E, 0x00}, []byte{2, 0x7E, 0x00, pad, pad, pad, pad, pad}},
	} {
		rs := ask(c.req...)
		if len(rs) != 1 || !bytes.Equal(rs[0].Data, c.want) {
			t.Errorf("% X: %+v, want % X", c.req, rs, c.want)
		}
	}
	if rs := ask(0x3E, 0x80); rs != nil {
		t.Errorf("suppressed tester present answered: %+v", rs)
	}
	if rs := e.Handle(0x7DF, []byte{2, 0x10, 0x01}); rs != nil {
		t.Errorf("functional id answered: %+v", rs)
	}
}

// FuzzHandle: whatever is written on the bus, the ECU answers with valid
// CAN frames and never panics.
func FuzzHandle(f *testing.F) {
	f.Add(uint32(wire.CANEFF|0x18EA00F9), []byte{0xEC, 0xFE, 0x00})
	f.Add(uint32(RequestID), []byte{0x03, 0x22, 0xF1, 0x90, pad, pad, pad, pad})
	f.Add(uint32(RequestID), []byte{0x30, 0x00, 0x00})
	f.Add(uint32(RequestID), []byte{0x02, 0x10, 0x03})
	f.Fuzz(func(t *testing.T, id uint32, data []byte) {
		if len(data) > 8 {
			return
		}
		e := New()
		for range 2 {
			for _, r := range e.Handle(id, data) {
				if _, err := wire.EncodeCAN(r.ID, r.Data); err != nil {
					t.Fatalf("answer %+v: %v", r, err)
				}
			}
		}
	})
}
