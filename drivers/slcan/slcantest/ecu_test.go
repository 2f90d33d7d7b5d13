package slcantest

import (
	"bytes"
	"testing"
	"time"
)

func TestECUHandle(t *testing.T) {
	const vin = "1FUJGLDR5CLBP8834"
	tests := []struct {
		name  string
		id    uint32
		ext   bool
		data  []byte
		first []byte // first reply's data; nil = no reply
		n     int    // replies
	}{
		{name: "VIN request to 00", id: 0x18EA00F9, ext: true, data: []byte{0xEC, 0xFE, 0x00}, first: []byte{0x20, 18, 0, 3, 0xFF, 0xEC, 0xFE, 0x00}, n: 4},
		{name: "VIN request to global", id: 0x18EAFFF9, ext: true, data: []byte{0xEC, 0xFE, 0x00}, first: []byte{0x20, 18, 0, 3, 0xFF, 0xEC, 0xFE, 0x00}, n: 4},
		{name: "VIN request to another ECU", id: 0x18EA03F9, ext: true, data: []byte{0xEC, 0xFE, 0x00}},
		{name: "other PGN", id: 0x18EA00F9, ext: true, data: []byte{0xCA, 0xFE, 0x00}},
		{name: "UDS F190 first frame", id: 0x7E0, data: []byte{3, 0x22, 0xF1, 0x90, 0xAA, 0xAA, 0xAA, 0xAA}, first: []byte{0x10, 20, 0x62, 0xF1, 0x90, '1', 'F', 'U'}, n: 1},
		{name: "UDS unknown DID", id: 0x7E0, data: []byte{3, 0x22, 0xF1, 0x91}, first: []byte{3, 0x7F, 0x22, 0x31, 0xAA, 0xAA, 0xAA, 0xAA}, n: 1},
		{name: "other request id", id: 0x7E1, data: []byte{3, 0x22, 0xF1, 0x90}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rs := NewECU(vin).Handle(tc.id, tc.ext, tc.data)
			if len(rs) != tc.n || tc.n > 0 && !bytes.Equal(rs[0].Data, tc.first) {
				t.Fatalf("replies %+v, want %d starting % X", rs, tc.n, tc.first)
			}
			if tc.n == 4 && (rs[0].ID != 0x1CECFF00 || rs[1].ID != 0x1CEBFF00) {
				t.Errorf("BAM ids %X %X, want 1CECFF00 1CEBFF00", rs[0].ID, rs[1].ID)
			}
		})
	}
}

func TestECUFlowControl(t *testing.T) {
	e := NewECU("1FUJGLDR5CLBP8834")
	if rs := e.Handle(0x7E0, false, []byte{0x30, 0, 0}); len(rs) != 0 {
		t.Fatalf("flow control with nothing pending sent %+v", rs)
	}
	e.Handle(0x7E0, false, []byte{3, 0x22, 0xF1, 0x90})
	rs := e.Handle(0x7E0, false, []byte{0x30, 1, 100}) // block size 1, STmin 100 ms
	if len(rs) != 1 || rs[0].Data[0] != 0x21 || rs[0].Delay != 100*time.Millisecond {
		t.Fatalf("first block %+v, want one CF at 100 ms", rs)
	}
	rs = e.Handle(0x7E0, false, []byte{0x30, 0, 0})
	if len(rs) != 1 || rs[0].Data[0] != 0x22 || string(rs[0].Data[1:]) != "CLBP8834"[1:] {
		t.Fatalf("second block %+v, want CF 2 with the VIN's tail", rs)
	}
	if e.FlowControls() != 3 {
		t.Errorf("flow controls %d, want 3", e.FlowControls())
	}
}
