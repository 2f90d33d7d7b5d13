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

func TestCANFDRoundTrip(t *testing.T) {
	data := make([]byte, MaxCANFDData)
	for i := range data {
		data[i] = byte(i)
	}
	b, err := AppendCANFD(nil, CANEFF|0x18FECA00, CANFDBRS|CANFDESI|0x80, data)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) != CANFDFrameBytes || b[4] != 64 || b[5] != CANFDFDF|CANFDBRS|CANFDESI {
		t.Fatalf("header % x, %d bytes", b[:8], len(b))
	}
	id, flags, got, err := DecodeCANFD(b)
	if err != nil || id != CANEFF|0x18FECA00 || flags != CANFDFDF|CANFDBRS|CANFDESI || len(got) != 64 || got[63] != 63 {
		t.Fatalf("got %#x %#x % x %v", id, flags, got, err)
	}
	// A frame padded to CANFD_MTU without CANFD_FDF (captures of kernels
	// before 6.0) is FD too.
	short, _ := AppendCANFD(nil, 0x123, CANFDBRS, []byte{1, 2, 3})
	short[5] &^= CANFDFDF
	short = append(short, make([]byte, CANFDFrameBytes-len(short))...)
	if _, flags, got, err := DecodeCANFD(short); err != nil || flags != CANFDFDF|CANFDBRS || len(got) != 3 {
		t.Fatalf("padded frame: %#x % x %v", flags, got, err)
	}
	// A classic frame's byte 5 is padding and says nothing.
	classic, _ := EncodeCAN(0x123, []byte{9})
	if _, flags, got, err := DecodeCANFD(classic); err != nil || flags != 0 || len(got) != 1 {
		t.Fatalf("classic: %#x % x %v", flags, got, err)
	}
	if _, err := AppendCANFD(nil, 0x123, 0, make([]byte, 65)); err == nil {
		t.Error("65 data bytes accepted")
	}
	if _, err := AppendCANFD(nil, 0x123|CANRTR, 0, nil); err == nil {
		t.Error("an FD remote frame accepted")
	}
	b[4] = 65
	if _, _, _, err := DecodeCANFD(b); err == nil {
		t.Error("length byte 65 accepted")
	}
}

func TestCANFDDLC(t *testing.T) {
	for n, want := range map[int]int{0: 0, 8: 8, 9: 9, 12: 9, 13: 10, 24: 12, 25: 13, 33: 14, 48: 14, 49: 15, 64: 15} {
		if got := CANFDDLC(n); got != want {
			t.Errorf("CANFDDLC(%d) = %d, want %d", n, got, want)
		}
	}
}
