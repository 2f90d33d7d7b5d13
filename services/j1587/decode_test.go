package j1587

import (
	"encoding/hex"
	"errors"
	"testing"
)

func mustHex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// withSum appends the J1708 checksum to body.
func withSum(body ...byte) []byte {
	var s byte
	for _, b := range body {
		s += b
	}
	return append(body, -s)
}

func TestDecode(t *testing.T) {
	tests := []struct {
		name string
		msg  []byte
		err  error
		pids []uint16
		lens []int
	}{
		{name: "school bus engine broadcast", msg: mustHex(t, "80540056005B075C05BB0000BEF70A99"), pids: []uint16{84, 86, 91, 92, 187, 190}, lens: []int{1, 1, 1, 1, 2, 2}},
		{name: "empty fault table", msg: mustHex(t, "80C200BE"), pids: []uint16{194}, lens: []int{0}},
		{name: "distance with length byte", msg: mustHex(t, "80F50487D6120018"), pids: []uint16{245}, lens: []int{4}},
		{name: "page 2 PID", msg: withSum(0x80, 0xFF, 0x05, 0x07), pids: []uint16{261}, lens: []int{1}},
		{name: "PID 254 takes the rest", msg: withSum(0x80, 0xFE, 1, 2, 3), pids: []uint16{254}, lens: []int{3}},
		{name: "254 is not a page prefix", msg: withSum(0x80, 0xFE), pids: []uint16{254}, lens: []int{0}},
		{name: "bad checksum", msg: mustHex(t, "80BE701700"), err: ErrChecksum},
		{name: "too short", msg: []byte{0x80}, err: ErrLength},
		{name: "too long", msg: make([]byte, 22), err: ErrLength},
		{name: "reserved MID", msg: withSum(0x54, 0x01), err: ErrNotJ1587},
		{name: "two-byte PID cut", msg: withSum(0x80, 0xBE, 0x70), err: ErrTruncated, pids: []uint16{}},
		{name: "length byte past end", msg: withSum(0x80, 0xF5, 0x04, 1, 2), err: ErrTruncated},
		{name: "page prefix at end", msg: withSum(0x80, 0xFF), err: ErrTruncated},
		{name: "double page prefix", msg: withSum(0x80, 0xFF, 0xFF, 0x01), err: ErrPage},
	}
	var d Decoder
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := d.Decode(tc.msg)
			if !errors.Is(err, tc.err) {
				t.Fatalf("err = %v, want %v", err, tc.err)
			}
			if tc.err != nil {
				return
			}
			if len(d.Params) != len(tc.pids) {
				t.Fatalf("params = %+v, want PIDs %v", d.Params, tc.pids)
			}
			for i, p := range d.Params {
				if p.PID != tc.pids[i] || len(p.Data) != tc.lens[i] {
					t.Errorf("param %d = PID %d len %d, want PID %d len %d", i, p.PID, len(p.Data), tc.pids[i], tc.lens[i])
				}
			}
		})
	}
}

func TestInterpret(t *testing.T) {
	tests := []struct {
		name   string
		p      Param
		status Status
		want   float64
		unit   string
	}{
		{name: "road speed", p: Param{PID: 84, Data: []byte{56}}, want: 28, unit: "mph"},
		{name: "engine speed", p: Param{PID: 190, Data: []byte{0x1F, 0x0B}}, want: 711.75, unit: "rpm"},
		{name: "coolant is degF not degC", p: Param{PID: 110, Data: []byte{0x6E}}, want: 110, unit: "degF"},
		{name: "battery", p: Param{PID: 168, Data: []byte{0x1D, 0x01}}, want: 14.25, unit: "V"},
		{name: "signed oil temperature", p: Param{PID: 175, Data: []byte{0xF0, 0xFF}}, want: -4, unit: "degF"},
		{name: "distance", p: Param{PID: 245, Data: []byte{0x87, 0xD6, 0x12, 0x00}}, want: 123456.7, unit: "mi"},
		{name: "not available", p: Param{PID: 84, Data: []byte{0xFF}}, status: StatusNotAvailable},
		{name: "short", p: Param{PID: 190, Data: []byte{1}}, status: StatusShort},
		{name: "unknown PID is raw", p: Param{PID: 300, Data: []byte{1}}, status: StatusNoNumber},
		{name: "VIN is text", p: Param{PID: 237, Data: []byte("1ABC")}, status: StatusNoNumber},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := Interpret(tc.p)
			if v.Status != tc.status {
				t.Fatalf("status = %v, want %v", v.Status, tc.status)
			}
			if tc.status != StatusOK {
				return
			}
			if d := v.Number - tc.want; d > 1e-6 || d < -1e-6 || v.Def.Unit != tc.unit {
				t.Errorf("value = %v %s, want %v %s", v.Number, v.Def.Unit, tc.want, tc.unit)
			}
		})
	}
	if v := Interpret(Param{PID: PIDVIN, Data: []byte("1ABC")}); !v.UntrustedText() || string(v.Text) != "1ABC" {
		t.Errorf("VIN = %+v, want untrusted text", v)
	}
}

func TestParseFaults(t *testing.T) {
	tests := []struct {
		name string
		data []byte
		want []Fault
		err  error
	}{
		{name: "empty table", data: nil, want: []Fault{}},
		{name: "active PID with count", data: []byte{110, 0x80 | 3, 5}, want: []Fault{{Code: 110, FMI: 3, Active: true, HasCount: true, Count: 5}}},
		{name: "inactive SID without count", data: []byte{2, 0x40 | 0x20 | 12}, want: []Fault{{Code: 2, IsSID: true, FMI: 12}}},
		{name: "page 2 PID", data: []byte{5, 0x10 | 1}, want: []Fault{{Code: 261, FMI: 1, Active: true}}},
		{name: "partial entry", data: []byte{110, 0x83}, want: []Fault{}, err: ErrTruncated},
	}
	var buf [MaxFaultsPerMessage]Fault
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n, err := ParseFaults(tc.data, &buf)
			if !errors.Is(err, tc.err) {
				t.Fatalf("err = %v, want %v", err, tc.err)
			}
			if n != len(tc.want) {
				t.Fatalf("n = %d, want %d", n, len(tc.want))
			}
			for i := range n {
				if buf[i] != tc.want[i] {
					t.Errorf("fault %d = %+v, want %+v", i, buf[i], tc.want[i])
				}
			}
		})
	}
}

func TestMIDNames(t *testing.T) {
	for mid, want := range map[byte]string{128: "Engine #1", 136: "Brakes, Power Unit", 137: "Brakes, Trailer #1", 172: "Off-board Diagnostics #1", 247: "Brakes, Trailer #5", 254: "Safety Restraint System #2", 255: "", 10: "J1708 reserved"} {
		if got := MIDName(mid); got != want {
			t.Errorf("MIDName(%d) = %q, want %q", mid, got, want)
		}
	}
}

func TestDecodeDoesNotAllocate(t *testing.T) {
	msg := mustHex(t, "80540056005B075C05BB0000BEF70A99")
	var d Decoder
	if n := testing.AllocsPerRun(100, func() {
		_ = d.Decode(msg)
		for _, p := range d.Params {
			_ = Interpret(p)
		}
	}); n != 0 {
		t.Errorf("allocs per message = %v, want 0", n)
	}
}

func FuzzDecode(f *testing.F) {
	for _, s := range []string{"80540056005B075C05BB0000BEF70A99", "80C200BE", "80F50487D6120018", "80FF0507", "80BE70"} {
		b, _ := hex.DecodeString(s)
		f.Add(b)
	}
	var buf [MaxFaultsPerMessage]Fault
	f.Fuzz(func(t *testing.T, msg []byte) {
		var d Decoder
		err := d.Decode(msg)
		used := 0
		for _, p := range d.Params {
			if p.PID >= MaxPID {
				t.Fatalf("PID %d out of range", p.PID)
			}
			used += len(p.Data)
			_ = Interpret(p)
			switch p.PID {
			case PIDFaults:
				_, _ = ParseFaults(p.Data, &buf)
			case PIDMultisection:
				_, _ = ParseSection(p.Data)
			}
		}
		if err == nil && used > len(msg)-2 {
			t.Fatalf("parameters use %d bytes of a %d-byte message", used, len(msg))
		}
	})
}

func BenchmarkDecode(b *testing.B) {
	msgs := [][]byte{
		mustHex(b, "80540056005B075C05BB0000BEF70A99"),
		mustHex(b, "80020028FF55007900B72600B80000F4"),
		mustHex(b, "80460047005300590047"),
		mustHex(b, "80C200BE"),
	}
	var d Decoder
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		m := msgs[n%len(msgs)]
		n++
		if d.Decode(m) == nil {
			for _, p := range d.Params {
				_ = Interpret(p)
			}
		}
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "msgs/s")
}
