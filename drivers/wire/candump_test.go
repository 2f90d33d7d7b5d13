package wire

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// candumpLines are the decoder's cases, and FuzzDecodeCandump's seeds.
var candumpLines = []struct {
	name    string
	line    string
	wantErr string
	id      uint32
	data    string // hex
	iface   string
	time    time.Time
	flags   uint8
}{
	{name: "log ext", line: "(1608041700.316550) can0 18FECA00#0102", id: 0x18FECA00 | CANEFF, data: "0102", iface: "can0", time: time.Unix(1608041700, 316550000)},
	{name: "log std lowercase padded", line: "(143.783033) can1      301#096fa73b0ab80c98", id: 0x301, data: "096FA73B0AB80C98", iface: "can1", time: time.Unix(143, 783033000)},
	{name: "log zero length", line: "(143.811551) can1 18FECA01#", id: 0x18FECA01 | CANEFF, iface: "can1", time: time.Unix(143, 811551000)},
	{name: "log remote", line: "(1.000000) can0 123#R", id: 0x123 | CANRTR, iface: "can0", time: time.Unix(1, 0)},
	{name: "pretty tz", line: " (000.005001)  can0  18FEDF00   [8]  8A A0 28 7D 7D FF FF F5", id: 0x18FEDF00 | CANEFF, data: "8AA0287D7DFFFFF5", iface: "can0", time: time.Unix(0, 5001000)},
	{name: "pretty std short", line: "(12.5)  vcan0  7DF   [2]  02 01", id: 0x7DF, data: "0201", iface: "vcan0", time: time.Unix(12, 500000000)},
	{name: "pretty zero", line: "(0.1)  can0  18FECA01   [0]", id: 0x18FECA01 | CANEFF, iface: "can0", time: time.Unix(0, 100000000)},
	{name: "pretty remote", line: "(0.1)  can0  123   [2]  remote request", id: 0x123 | CANRTR, iface: "can0", time: time.Unix(0, 100000000)},
	{name: "prose", line: "not a candump line", wantErr: "timestamp"},
	{name: "odd hex", line: "(0.000000) can0 123#123", wantErr: "odd"},
	{name: "dlc over 8", line: "(0.0) can0 123#00112233445566778899", wantErr: "longer than 8"},
	{name: "pretty dlc over 8", line: "(0.0)  can0  123   [9]  00", wantErr: "dlc"},
	{name: "pretty count mismatch", line: "(0.0)  can0  123   [3]  00 11", wantErr: "announced"},
	{name: "pretty too many", line: "(0.0)  can0  123   [1]  00 11", wantErr: "match"},
	{name: "non hex data", line: "(0.0) can0 123#zz", wantErr: "not hex"},
	{name: "id too long", line: "(0.0) can0 123456789#00", wantErr: "want up to 3"},
	{name: "short std id", line: "(0.0) vcan0 64#37", id: 0x64, data: "37", iface: "vcan0", time: time.Unix(0, 0)},
	{name: "std id over 11 bits", line: "(0.0) can0 FFF#00", wantErr: "11 bits"},
	{name: "fd brs", line: "(0.0) can0 123##100", id: 0x123, data: "00", iface: "can0", time: time.Unix(0, 0), flags: CANFDFDF | CANFDBRS},
	{name: "fd 64 ext esi", line: "(1.5) can0 18FECA00##2000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F202122232425262728292A2B2C2D2E2F303132333435363738393A3B3C3D3E3F", id: 0x18FECA00 | CANEFF, data: "000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F202122232425262728292A2B2C2D2E2F303132333435363738393A3B3C3D3E3F", iface: "can0", time: time.Unix(1, 500000000), flags: CANFDFDF | CANFDESI},
	{name: "fd empty", line: "(0.0) can0 123##0", id: 0x123, iface: "can0", time: time.Unix(0, 0), flags: CANFDFDF},
	{name: "fd fdf bit ignored", line: "(0.0) can0 123##511", id: 0x123, data: "11", iface: "can0", time: time.Unix(0, 0), flags: CANFDFDF | CANFDBRS},
	{name: "fd cansend dots", line: "(0.0) can0 123##1.11.22.33", id: 0x123, data: "112233", iface: "can0", time: time.Unix(0, 0), flags: CANFDFDF | CANFDBRS},
	{name: "fd direction", line: "(1796452287.623857) can0 123##1001122334455667788990011 R", id: 0x123, data: "001122334455667788990011", iface: "can0", time: time.Unix(1796452287, 623857000), flags: CANFDFDF | CANFDBRS},
	{name: "classic direction tx", line: "(1.0) can0 7FF#0102 T", id: 0x7FF, data: "0102", iface: "can0", time: time.Unix(1, 0)},
	{name: "remote direction", line: "(1.0) can0 7FF#R R", id: 0x7FF | CANRTR, iface: "can0", time: time.Unix(1, 0)},
	{name: "classic cansend dots", line: "(0.0) can0 123#11.22", id: 0x123, data: "1122", iface: "can0", time: time.Unix(0, 0)},
	{name: "fd no flags", line: "(0.0) can0 123##", wantErr: "flags digit"},
	{name: "fd bad flags", line: "(0.0) can0 123##x00", wantErr: "flags"},
	{name: "fd over 64", line: "(0.0) can0 123##0000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F202122232425262728292A2B2C2D2E2F303132333435363738393A3B3C3D3E3F00", wantErr: "longer than 64"},
	{name: "fd remote", line: "(0.0) can0 123##R", wantErr: "flags"},
	{name: "fd error frame", line: "(0.0) can0 20000004##000", wantErr: "error frame"},
	{name: "pretty fd", line: " (000.005001)  can0  18FEDF00  [12]  8A A0 28 7D 7D FF FF F5 00 11 22 33", id: 0x18FEDF00 | CANEFF, data: "8AA0287D7DFFFFF5" + "00112233", iface: "can0", time: time.Unix(0, 5001000), flags: CANFDFDF},
	{name: "pretty fd short", line: " (000.005001)  can0  123  [02]  8A A0", id: 0x123, data: "8AA0", iface: "can0", time: time.Unix(0, 5001000), flags: CANFDFDF},
	{name: "pretty fd over 64", line: " (0.0)  can0  123  [65]  8A", wantErr: "dlc"},
	{name: "extra field", line: "(0.0) can0 123#00 junk", wantErr: "exactly"},
	{name: "bad time", line: "(1x.0) can0 123#00", wantErr: "seconds"},
	{name: "log crlf", line: "(1.5) can0 7FF#00\r\n", id: 0x7FF, data: "00", iface: "can0", time: time.Unix(1, 500000000)},
	{name: "log nanoseconds", line: "(1.000000001) can0 7FF#", id: 0x7FF, iface: "can0", time: time.Unix(1, 1)},
	{name: "log beyond nanoseconds", line: "(1.0000000019) can0 7FF#", id: 0x7FF, iface: "can0", time: time.Unix(1, 1)},
	{name: "log error frame", line: "(1.0) can0 FFFFFFFF#00", id: CANERR | CANErrMask, data: "00", iface: "can0", time: time.Unix(1, 0)},
	{name: "log ext over 29 bits", line: "(1.0) can0 4FFFFFFF#00", wantErr: "29 bits"},
	{name: "log trailing blank", line: "(1.0) can0 7FF#00 ", id: 0x7FF, data: "00", iface: "can0", time: time.Unix(1, 0)},
	{name: "log tab", line: "(1.0)\tcan0\t7FF#00", id: 0x7FF, data: "00", iface: "can0", time: time.Unix(1, 0)},
	{name: "log no fraction", line: "(17) can0 7FF#01", id: 0x7FF, data: "01", iface: "can0", time: time.Unix(17, 0)},
	{name: "log seconds too long", line: "(1234567890123.0) can0 7FF#01", wantErr: "seconds"},
	{name: "log remote with dlc", line: "(1.0) can0 7FF#R2", id: 0x7FF | CANRTR, iface: "can0", time: time.Unix(1, 0)},
	{name: "log bad hex at end", line: "(1.0) can0 7FF#0g", wantErr: "not hex"},
}

func TestDecodeCandump(t *testing.T) {
	for _, tc := range candumpLines {
		t.Run(tc.name, func(t *testing.T) {
			var r CandumpRecord
			err := DecodeCandump([]byte(tc.line), &r)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if r.ID != tc.id || strings.ToUpper(hexOf(r.Payload())) != tc.data || string(r.Interface) != tc.iface || !r.Time.Equal(tc.time) || r.Flags != tc.flags {
				t.Errorf("got id %#x data %s iface %s time %v flags %#x", r.ID, hexOf(r.Payload()), r.Interface, r.Time, r.Flags)
			}
		})
	}
}

func hexOf(b []byte) string {
	var s strings.Builder
	for _, c := range b {
		s.WriteByte(hexDigits[c>>4])
		s.WriteByte(hexDigits[c&0xF])
	}
	return s.String()
}

func TestAppendCandumpRoundTrips(t *testing.T) {
	tests := []struct {
		name string
		line string
	}{
		{name: "ext", line: "(1608041700.316550) can0 18FECA00#0102030405060708\n"},
		{name: "std", line: "(143.783033) can1 301#096FA73B0AB80C98\n"},
		{name: "empty", line: "(0.000000) can0 18FECA01#\n"},
		{name: "remote", line: "(5.000001) can0 7FF#R\n"},
		{name: "fd", line: "(5.000001) can0 7FF##3000102030405060708090A0B\n"},
		{name: "fd empty", line: "(5.000001) can0 18FECA01##0\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var r CandumpRecord
			if err := DecodeCandump([]byte(tc.line), &r); err != nil {
				t.Fatal(err)
			}
			got := AppendCandumpFrame(nil, r.Time, string(r.Interface), r.ID, r.Flags, r.Payload())
			if string(got) != tc.line {
				t.Errorf("AppendLine = %q, want %q", got, tc.line)
			}
		})
	}
}

// TestDecodeLogLineTakesLogLines checks that the one-pass reader is the
// one that reads plain -l lines, and leaves padded ones to the other.
func TestDecodeLogLineTakesLogLines(t *testing.T) {
	for _, tc := range []struct {
		line string
		fast bool
	}{
		{"(1608041700.316550) can0 18FECA00#0102", true},
		{"(143.811551) can1 18FECA01#", true},
		{"(1.000000) can0 123#R", true},
		{"(0.0) vcan0 64#37", true},
		{"(1.5) can0 7FF#00\r\n", true},
		{"(1.0) can0 FFFFFFFF#00", true},
		{"(143.783033) can1      301#096fa73b0ab80c98", false},
		{"(1.0) can0 7FF#00 ", false},
		{"(17) can0 7FF#01", false},
		{"(1.0) can0 7FF#0g", false},
	} {
		var r CandumpRecord
		if got := decodeLogLine([]byte(tc.line), &r); got != tc.fast {
			t.Errorf("decodeLogLine(%q) = %v, want %v", tc.line, got, tc.fast)
		}
	}
}

// TestDecodeLogLineAgreesWithGeneralReader changes, drops or doubles
// each byte of -l lines, every value at every place, and holds the
// one-pass reader to the general one wherever it accepts the result.
func TestDecodeLogLineAgreesWithGeneralReader(t *testing.T) {
	for _, line := range []string{
		"(1608041700.316550) can0 18FECA00#0102030405060708",
		"(1608041700.316550) can0 18fecaff#a1B2c3D4e5F6a7B8",
		"(1608041700.316550) can0 7FF#0102",
		"(1608041700.316550) can0 18FECA00#R",
		"(12.5) vcan10 64#",
	} {
		check := func(b []byte) {
			var fast, slow CandumpRecord
			if !decodeLogLine(b, &fast) {
				return
			}
			if err := decodeCandump(b, &slow); err != nil {
				t.Fatalf("%q: one pass took it, the general reader says %v", b, err)
			}
			if !sameRecord(&fast, &slow) {
				t.Fatalf("%q: one pass read %+v, the general reader %+v", b, fast, slow)
			}
		}
		var r CandumpRecord
		if !decodeLogLine([]byte(line), &r) {
			t.Errorf("decodeLogLine(%q) refused it", line)
		}
		for i := range len(line) {
			b := []byte(line)
			for c := range 256 {
				b[i] = byte(c)
				check(b)
			}
			check([]byte(line[:i] + line[i+1:]))
			check([]byte(line[:i] + line[i:i+1] + line[i:]))
		}
	}
}

// sameRecord compares two records field by field, the time's location too.
func sameRecord(a, b *CandumpRecord) bool {
	return a.Time.Equal(b.Time) && a.Time.Location() == b.Time.Location() &&
		bytes.Equal(a.Interface, b.Interface) && a.ID == b.ID && a.Len == b.Len && a.Flags == b.Flags &&
		bytes.Equal(a.Payload(), b.Payload())
}

func FuzzDecodeCandump(f *testing.F) {
	for _, tc := range candumpLines {
		f.Add([]byte(tc.line))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		// The one-pass reader takes only what the general one reads the
		// same way.
		var fast, slow CandumpRecord
		if decodeLogLine(b, &fast) {
			if err := decodeCandump(b, &slow); err != nil {
				t.Fatalf("%q: one pass took it, the general reader says %v", b, err)
			}
			if !sameRecord(&fast, &slow) {
				t.Fatalf("%q: one pass read %+v, the general reader %+v", b, fast, slow)
			}
		}
		var r CandumpRecord
		if err := DecodeCandump(b, &r); err != nil {
			return
		}
		if limit := MaxCANData; r.Len > MaxCANData && (r.Flags&CANFDFDF == 0 || r.Len > MaxCANFDData) {
			t.Fatalf("Len %d > %d, flags %#x", r.Len, limit, r.Flags)
		}
		// A line we accept must survive a write and a re-read unchanged.
		if len(r.Interface) == 0 || bytes.ContainsAny(r.Interface, " \t\r\n") {
			return
		}
		out := AppendCandumpFrame(nil, r.Time, string(r.Interface), r.ID, r.Flags, r.Payload())
		var r2 CandumpRecord
		if err := DecodeCandump(out, &r2); err != nil {
			t.Fatalf("%q: the reader refused what AppendCandumpFrame wrote: %v", out, err)
		}
		if r.Flags == 0 && !decodeLogLine(out, &r2) {
			t.Fatalf("%q: the one-pass reader refused what AppendCandump wrote", out)
		}
		if r2.ID != r.ID || r2.Len != r.Len || r2.Flags != r.Flags || !bytes.Equal(r2.Payload(), r.Payload()) {
			t.Fatalf("round trip changed %q → %q", b, out)
		}
	})
}

func BenchmarkDecodeCandump(b *testing.B) {
	lines := [][]byte{
		[]byte("(1634254884.936348) can1 0CF00400#F87D7D000000FF7D"),
		[]byte(" (000.005001)  can0  18FEDF00   [8]  8A A0 28 7D 7D FF FF F5"),
	}
	for _, l := range lines {
		b.Run(string(l[:8]), func(b *testing.B) {
			var r CandumpRecord
			b.ReportAllocs()
			b.SetBytes(int64(len(l)))
			for b.Loop() {
				if err := DecodeCandump(l, &r); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
