package wire

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestParseJ1708Line(t *testing.T) {
	tests := []struct {
		name    string
		line    string
		wantErr string
		j2497   bool
		data    []byte
		time    time.Time
	}{
		{name: "j1708", line: "(1.688000) j1708 80020028F4", data: []byte{0x80, 0x02, 0x00, 0x28, 0xF4}, time: time.Unix(1, 688000000)},
		{name: "j2497 lower hex", line: "(1700000000.000001) j2497 89f00087", j2497: true, data: []byte{0x89, 0xF0, 0x00, 0x87}, time: time.Unix(1700000000, 1000)},
		{name: "NaN time", line: "(NaN) j1708 8080", wantErr: "seconds"},
		{name: "underscore time", line: "(1_0) j1708 8080", wantErr: "seconds"},
		{name: "no time", line: "j1708 8000", wantErr: "timestamp"},
		{name: "bad tag", line: "(1.0) j1939 8080", wantErr: "tag"},
		{name: "one byte", line: "(1.0) j1708 80", wantErr: "2 to 21"},
		{name: "too long", line: "(1.0) j1708 " + strings.Repeat("00", 22), wantErr: "2 to 21"},
		{name: "not hex", line: "(1.0) j1708 80ZZ", wantErr: "not hex"},
		{name: "extra field", line: "(1.0) j1708 8080 junk", wantErr: "want"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l, err := ParseJ1708Line([]byte(tc.line))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if l.J2497 != tc.j2497 || !bytes.Equal(l.Data, tc.data) || !l.Time.Equal(tc.time) {
				t.Errorf("got %+v", l)
			}
		})
	}
}

func FuzzParseJ1708Line(f *testing.F) {
	for _, s := range []string{
		"(1.688000) j1708 80020028F4",
		"(1700000000.000001) j2497 89F00087",
		"(0.5) j1708 8000",
		"garbage",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		l, err := ParseJ1708Line(b)
		if err != nil {
			return
		}
		if len(l.Data) < MinJ1708Message || len(l.Data) > MaxJ1708Message {
			t.Fatalf("accepted a %d-byte message", len(l.Data))
		}
		// What we accept must survive a write and a re-read unchanged.
		out := AppendJ1708Line(nil, l.Time, l.J2497, l.Data)
		l2, err := ParseJ1708Line(out)
		if err != nil {
			t.Fatalf("re-read %q: %v", out, err)
		}
		if l2.J2497 != l.J2497 || !bytes.Equal(l2.Data, l.Data) || !l2.Time.Equal(l.Time) {
			t.Fatalf("round trip changed %q → %q", b, out)
		}
	})
}
