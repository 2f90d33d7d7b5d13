package slcan

import (
	"fieldtap/drivers/wire"
	"strings"
	"testing"
)

func TestFormatFrame(t *testing.T) {
	tests := []struct {
		name    string
		id      uint32
		data    []byte
		want    string
		wantErr string
	}{
		{name: "J1939 request for the VIN", id: wire.CANEFF | 0x18EA00F9, data: []byte{0xEC, 0xFE, 0x00}, want: "T18EA00F93ECFE00\r"},
		{name: "UDS single frame", id: 0x7E0, data: []byte{0x03, 0x22, 0xF1, 0x90, 0xAA, 0xAA, 0xAA, 0xAA}, want: "t7E080322F190AAAAAAAA\r"},
		{name: "empty standard", id: 0x001, want: "t0010\r"},
		{name: "remote refused", id: wire.CANRTR | 0x123, wantErr: "remote"},
		{name: "error frame refused", id: wire.CANERR | 0x123, wantErr: "remote and error"},
		{name: "nine bytes", id: 0x123, data: make([]byte, 9), wantErr: "at most 8"},
		{name: "11-bit overflow", id: 0x800, wantErr: "11-bit"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := formatFrame(tc.id, tc.data)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one naming %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || string(got) != tc.want {
				t.Fatalf("formatFrame = %q, %v; want %q", got, err, tc.want)
			}
			// What we send must parse back as the frame we meant.
			f, err := parseLine(got[:len(got)-1])
			if err != nil || f.ID != tc.id || string(f.Payload()) != string(tc.data) {
				t.Errorf("round trip = %#x % x (%v)", f.ID, f.Payload(), err)
			}
		})
	}
}
