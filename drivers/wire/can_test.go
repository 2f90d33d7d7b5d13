package wire

import "testing"

func TestCANRoundTrip(t *testing.T) {
	b, err := EncodeCAN(CANEFF|0x18FECA00, []byte{1, 2, 3})
	if err != nil {
		t.Fatal(err)
	}
	id, data, err := DecodeCAN(b)
	if err != nil || id != CANEFF|0x18FECA00 || len(data) != 3 || data[2] != 3 {
		t.Fatalf("got %#x % x %v", id, data, err)
	}
	if _, err := EncodeCAN(1, make([]byte, 9)); err == nil {
		t.Error("9 data bytes accepted")
	}
	b[4] = 9
	if _, _, err := DecodeCAN(b); err == nil {
		t.Error("length byte 9 accepted")
	}
}

func TestFormatCANID(t *testing.T) {
	tests := []struct {
		name string
		id   uint32
		want string
	}{
		{name: "extended", id: CANEFF | 0x18FECA00, want: "18FECA00"},
		{name: "extended remote", id: CANEFF | CANRTR | 0x18EA00F9, want: "18EA00F9"},
		{name: "standard", id: 0x7DF, want: "7DF"},
		{name: "standard small", id: 0x64, want: "064"},
		{name: "error class", id: CANERR | 0x4, want: "00000004"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := FormatCANID(tc.id); got != tc.want {
				t.Errorf("FormatCANID(%#x) = %q, want %q", tc.id, got, tc.want)
			}
		})
	}
}
