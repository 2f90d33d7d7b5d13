package ethernet

import (
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/net/bpf"
)

// Classic BPF encoding (include/uapi/linux/filter.h, bpf_common.h).
const (
	maxInsns = 4096 // BPF_MAXINSNS: the kernel refuses longer programs
	classJmp = 0x05 // BPF_JMP
	classRet = 0x06 // BPF_RET
	opJA     = 0x00 // BPF_JA: unconditional, offset in k
)

// ParseFilter reads a classic BPF program as `tcpdump -dd` prints it
//
//	{ 0x28, 0, 0, 0x0000000c },
//
// or as `tcpdump -ddd` prints it (the instruction count, then one
// `code jt jf k` line of decimals per instruction). Blank lines and lines
// starting with # are skipped. An empty source is no filter (nil).
func ParseFilter(src string) ([]bpf.RawInstruction, error) {
	var lines []string
	for l := range strings.Lines(src) {
		l = strings.TrimSpace(l)
		if l != "" && !strings.HasPrefix(l, "#") {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		return nil, nil
	}
	var prog []bpf.RawInstruction
	if strings.HasPrefix(lines[0], "{") {
		for i, l := range lines {
			body := strings.TrimSuffix(strings.TrimSuffix(l, ","), "}")
			ins, err := parseInsn(strings.TrimPrefix(body, "{"), ",")
			if err != nil {
				return nil, fmt.Errorf("line %d %q: %w", i+1, l, err)
			}
			prog = append(prog, ins)
		}
	} else {
		n, err := strconv.Atoi(lines[0])
		if err != nil {
			return nil, fmt.Errorf("line 1 %q: want the instruction count of tcpdump -ddd, or { code, jt, jf, k } lines of tcpdump -dd", lines[0])
		}
		if n != len(lines)-1 {
			return nil, fmt.Errorf("count line says %d instructions, %d follow", n, len(lines)-1)
		}
		for i, l := range lines[1:] {
			ins, err := parseInsn(l, "")
			if err != nil {
				return nil, fmt.Errorf("line %d %q: %w", i+2, l, err)
			}
			prog = append(prog, ins)
		}
	}
	if err := checkProgram(prog); err != nil {
		return nil, err
	}
	return prog, nil
}

// parseInsn reads "code jt jf k", separated by sep or by blanks when sep
// is empty; numbers are decimal or 0x hex.
func parseInsn(s, sep string) (bpf.RawInstruction, error) {
	var f []string
	if sep == "" {
		f = strings.Fields(s)
	} else {
		f = strings.Split(s, sep)
	}
	if len(f) != 4 {
		return bpf.RawInstruction{}, fmt.Errorf("want 4 numbers (code, jt, jf, k), found %d", len(f))
	}
	var v [4]uint64
	bits := [4]int{16, 8, 8, 32}
	for i, x := range f {
		n, err := strconv.ParseUint(strings.TrimSpace(x), 0, bits[i])
		if err != nil {
			return bpf.RawInstruction{}, fmt.Errorf("field %d: %w", i+1, err)
		}
		v[i] = n
	}
	return bpf.RawInstruction{Op: uint16(v[0]), Jt: uint8(v[1]), Jf: uint8(v[2]), K: uint32(v[3])}, nil
}

// checkProgram rejects what the kernel would (length, jumps past the end,
// no final return) with a message naming the instruction.
func checkProgram(p []bpf.RawInstruction) error {
	if len(p) == 0 { // "0" alone, as tcpdump -ddd would print an empty program
		return fmt.Errorf("no instructions: a filter must end in a return")
	}
	if len(p) > maxInsns {
		return fmt.Errorf("%d instructions: the kernel takes at most %d", len(p), maxInsns)
	}
	for i, ins := range p {
		if ins.Op&0x07 != classJmp {
			continue
		}
		left := len(p) - i - 1
		if ins.Op&0xf0 == opJA {
			if int64(ins.K) >= int64(left) {
				return fmt.Errorf("instruction %d jumps %d past the end", i, ins.K)
			}
			continue
		}
		if int(ins.Jt) >= left || int(ins.Jf) >= left {
			return fmt.Errorf("instruction %d jumps past the end", i)
		}
	}
	if p[len(p)-1].Op&0x07 != classRet {
		return fmt.Errorf("the last instruction must return")
	}
	return nil
}
