package ethernet

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/bpf"
)

// FuzzParseFilter parses anything as a capture filter (tcpdump -dd or
// -ddd text): no input panics, and a program it accepts is one the
// kernel would (at most 4096 instructions, every jump inside, a final
// return), prints back to the same program in both forms, and runs to
// an end in x/net/bpf's VM.
func FuzzParseFilter(f *testing.F) {
	raw, _ := bpf.Assemble(sipFilter)
	for _, ddd := range []bool{false, true} {
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
		f.Add(b.String())
	}
	f.Add("# comment\n1\n6 0 0 262144\n")
	f.Add("{ 0x15, 0, 9, 0x00000800 },\n")
	f.Add("2\n5 0 0 4294967295\n6 0 0 0\n")
	f.Fuzz(func(t *testing.T, src string) {
		prog, err := ParseFilter(src)
		if err != nil || prog == nil {
			return
		}
		if err := checkProgram(prog); err != nil {
			t.Fatalf("accepted a program the kernel refuses: %v", err)
		}
		for _, ddd := range []bool{false, true} {
			var b strings.Builder
			if ddd {
				fmt.Fprintf(&b, "%d\n", len(prog))
			}
			for _, r := range prog {
				if ddd {
					fmt.Fprintf(&b, "%d %d %d %d\n", r.Op, r.Jt, r.Jf, r.K)
				} else {
					fmt.Fprintf(&b, "{ 0x%x, %d, %d, 0x%08x },\n", r.Op, r.Jt, r.Jf, r.K)
				}
			}
			back, err := ParseFilter(b.String())
			if err != nil || !slices.Equal(back, prog) {
				t.Fatalf("printed as -dd%s, the program reads back as %v, %v", map[bool]string{true: "d"}[ddd], back, err)
			}
		}
		insns, ok := bpf.Disassemble(prog)
		if !ok {
			return // an instruction x/net/bpf does not model; the kernel judges it
		}
		if vm, err := bpf.NewVM(insns); err == nil {
			vm.Run(udpFrame(5060))
		}
	})
}
