package ethernet

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/bpf"
)

// sipFilter is `udp port 5060` over IPv4 on Ethernet, unfragmented.
var sipFilter = []bpf.Instruction{
	bpf.LoadAbsolute{Off: 12, Size: 2},
	bpf.JumpIf{Cond: bpf.JumpEqual, Val: 0x0800, SkipFalse: 8},
	bpf.LoadAbsolute{Off: 23, Size: 1},
	bpf.JumpIf{Cond: bpf.JumpEqual, Val: 17, SkipFalse: 6},
	bpf.LoadMemShift{Off: 14},
	bpf.LoadIndirect{Off: 14, Size: 2},
	bpf.JumpIf{Cond: bpf.JumpEqual, Val: 5060, SkipTrue: 2},
	bpf.LoadIndirect{Off: 16, Size: 2},
	bpf.JumpIf{Cond: bpf.JumpEqual, Val: 5060, SkipFalse: 1},
	bpf.RetConstant{Val: 262144},
	bpf.RetConstant{Val: 0},
}

// sipFilterText prints sipFilter as `tcpdump -dd` (or -ddd) would.
func sipFilterText(t *testing.T, ddd bool) string {
	t.Helper()
	raw, err := bpf.Assemble(sipFilter)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if ddd {
		fmt.Fprintf(&b, "%d\n", len(raw))
	}
	for _, r := range raw {
		if ddd {
			fmt.Fprintf(&b, "%d %d %d %d\n", r.Op, r.Jt, r.Jf, r.K)
		} else {
			fmt.Fprintf(&b, "{ 0x%x, %d, %d, 0x%08x },\n", r.Op, r.Jt, r.Jf, r.K)
		}
	}
	return b.String()
}

func udpFrame(dport uint16) []byte {
	f := make([]byte, 14+20+8)
	f[12], f[13] = 0x08, 0x00
	f[14] = 0x45
	f[23] = 17
	f[34], f[35] = 0x13, 0x88 // source port 5000
	f[36], f[37] = byte(dport>>8), byte(dport)
	return f
}

func TestParseFilterRoundTrip(t *testing.T) {
	want, _ := bpf.Assemble(sipFilter)
	for _, ddd := range []bool{false, true} {
		got, err := ParseFilter("# udp port 5060\n" + sipFilterText(t, ddd))
		if err != nil {
			t.Fatalf("ddd=%v: %v", ddd, err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("ddd=%v: got %v, want %v", ddd, got, want)
		}
	}
	// The parsed program filters as intended.
	insns := make([]bpf.Instruction, len(want))
	for i, r := range want {
		insns[i] = r.Disassemble()
	}
	vm, err := bpf.NewVM(insns)
	if err != nil {
		t.Fatal(err)
	}
	for port, keep := range map[uint16]bool{5060: true, 53: false} {
		n, err := vm.Run(udpFrame(port))
		if err != nil || (n > 0) != keep {
			t.Errorf("port %d: kept %d bytes (%v), want keep=%v", port, n, err, keep)
		}
	}
}

func TestParseFilterErrors(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{name: "empty is no filter", src: "  \n# nothing\n"},
		{name: "three fields", src: "{ 0x6, 0, 0 },", want: "want 4 numbers"},
		{name: "not a number", src: "{ 0x6, 0, 0, x },", want: "field 4"},
		{name: "jt too wide", src: "{ 0x15, 256, 0, 1 },\n{ 0x6, 0, 0, 0 },", want: "field 2"},
		{name: "no return", src: "{ 0x28, 0, 0, 12 },", want: "must return"},
		{name: "jump past end", src: "{ 0x15, 1, 0, 1 },\n{ 0x6, 0, 0, 0 },", want: "jumps past the end"},
		{name: "ja past end", src: "{ 0x05, 0, 0, 1 },\n{ 0x6, 0, 0, 0 },", want: "jumps 1 past"},
		{name: "ddd count mismatch", src: "2\n6 0 0 0\n", want: "count line says 2"},
		{name: "ddd no count", src: "6 0 0 0\n", want: "instruction count"},
		{name: "ddd ok", src: "1\n6 0 0 65535\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseFilter(tc.src)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("unexpected error %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("err = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestNewChecksOptions(t *testing.T) {
	tests := []struct {
		name string
		o    Options
		want string
	}{
		{name: "defaults", o: Options{Name: "span0", Device: "eth1"}},
		{name: "no device", o: Options{Name: "span0"}, want: "no device"},
		{name: "odd block", o: Options{Name: "span0", Device: "eth1", BlockSize: 5000}, want: "multiple of 4096"},
		{name: "bad filter", o: Options{Name: "span0", Device: "eth1", Filter: "{ 1 },"}, want: "filter"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := New(tc.o)
			if tc.want == "" {
				if err != nil || s.opts.BlockSize != DefaultBlockSize || s.Origin() != "afpacket:eth1" {
					t.Fatalf("New = %+v, %v", s, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}
