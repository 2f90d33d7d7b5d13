package j1939

import "testing"

func TestSAName(t *testing.T) {
	for _, tc := range []struct {
		sa   uint8
		want string
	}{
		{sa: 0x00, want: "Engine #1"},
		{sa: 0x03, want: "Transmission #1"},
		{sa: 0x0B, want: "Brakes - System Controller"},
		{sa: 0x21, want: "Body Controller"},
		{sa: 89, want: "Atmospheric Sensor"},
		{sa: 90, want: "reserved"},
		{sa: 127, want: "reserved"},
		{sa: 128, want: "self-configurable"},
		{sa: 247, want: "self-configurable"},
		{sa: 0xF9, want: "Off Board Diagnostic-Service Tool #1"},
		{sa: 0xFE, want: "Null Address"},
		{sa: 0xFF, want: "GLOBAL"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			if got := SAName(tc.sa); got != tc.want {
				t.Errorf("SAName(%d) = %q, want %q", tc.sa, got, tc.want)
			}
		})
	}
	for sa := range 256 {
		if SAName(uint8(sa)) == "" {
			t.Errorf("SA %d has no name", sa)
		}
	}
}
