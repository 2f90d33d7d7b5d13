package dbc

import (
	"bytes"
	"strconv"
	"strings"
	"unicode/utf8"
)

// prepared is the text handed to einride's parser plus what was read
// around it. Every rewrite keeps line numbers, so a parser position is a
// position in the operator's file.
type prepared struct {
	text []byte
	// notes say what was rewritten, for the load answer.
	notes []string
	// switchLines are the lines of `mNM` signals rewritten to `mN`: the
	// signal is multiplexed and is itself a multiplexer.
	switchLines map[int]bool
	mulVals     []mulVal
}

// mulVal is one SG_MUL_VAL_ line: signal is present when switchName's raw
// value lies in one of ranges (inclusive).
type mulVal struct {
	line       int
	msgID      uint32 // as written in the file, extended flag included
	signal     string
	switchName string
	ranges     [][2]int64
}

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// prepare transcodes, strips comments and lifts out what einride cannot
// read. name is only for errors.
func prepare(name string, data []byte) (*prepared, error) {
	p := &prepared{switchLines: map[int]bool{}}
	data = bytes.TrimPrefix(data, utf8BOM)
	if !utf8.Valid(data) {
		data = fromWindows1252(data)
		p.notes = append(p.notes, "the file is not UTF-8: read as Windows-1252 (Latin-1) and transcoded")
	}
	data, n := stripLineComments(data)
	if n > 0 {
		p.notes = append(p.notes, strconv.Itoa(n)+" `//` comment(s) stripped")
	}
	lines := bytes.SplitAfter(data, []byte{'\n'})
	nested := 0
	for i, ln := range lines {
		lineNo := i + 1
		f := strings.Fields(string(ln))
		if len(f) == 0 {
			continue
		}
		switch {
		case f[0] == "SG_MUL_VAL_" && len(f) > 1:
			mv, err := parseMulVal(name, lineNo, string(ln))
			if err != nil {
				return nil, err
			}
			p.mulVals = append(p.mulVals, mv)
			// einride keeps it as an unknown statement whose line skipping
			// can swallow the next definition: blank it.
			lines[i] = blankLine(ln)
		case f[0] == "SG_" && len(f) > 2:
			if rewriteNestedMux(ln) {
				p.switchLines[lineNo] = true
				nested++
			}
		}
	}
	if nested > 0 {
		p.notes = append(p.notes, strconv.Itoa(nested)+" nested multiplexer(s) (`mNM`) read as extended multiplexing with SG_MUL_VAL_")
	}
	p.text = bytes.Join(lines, nil)
	return p, nil
}

// cp1252High maps 0x80–0x9F; the five bytes Windows-1252 leaves undefined
// map to the C1 code point of the same value, as WHATWG's decoder does.
var cp1252High = [32]rune{
	0x20AC, 0x81, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021,
	0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0x8D, 0x017D, 0x8F,
	0x90, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014,
	0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x9D, 0x017E, 0x0178,
}

// fromWindows1252 transcodes every byte; 0xA0–0xFF are Latin-1.
func fromWindows1252(b []byte) []byte {
	out := make([]byte, 0, len(b)+len(b)/8)
	for _, c := range b {
		switch {
		case c < 0x80:
			out = append(out, c)
		case c < 0xA0:
			out = utf8.AppendRune(out, cp1252High[c-0x80])
		default:
			out = utf8.AppendRune(out, rune(c))
		}
	}
	return out
}

// stripLineComments removes `//` to the end of the line outside "strings"
// (a comment may hold a URL) and returns how many it removed. A string's
// escaped quote (\") does not end it, as in einride's reader.
func stripLineComments(b []byte) ([]byte, int) {
	if !bytes.Contains(b, []byte("//")) {
		return b, 0
	}
	out := make([]byte, 0, len(b))
	n := 0
	inString := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case inString && c == '\\' && i+1 < len(b) && b[i+1] == '"':
			out = append(out, c, b[i+1])
			i++
			continue
		case c == '"':
			inString = !inString
		case !inString && c == '/' && i+1 < len(b) && b[i+1] == '/':
			n++
			for i < len(b) && b[i] != '\n' && b[i] != '\r' {
				i++
			}
			i-- // keep the line end
			continue
		}
		out = append(out, c)
	}
	return out, n
}

// rewriteNestedMux turns ` SG_ Name m12M : …` into ` SG_ Name m12  : …`
// in place and reports whether it did.
func rewriteNestedMux(ln []byte) bool {
	i := bytes.Index(ln, []byte("SG_"))
	if i < 0 {
		return false
	}
	i += len("SG_")
	i = skipSpace(ln, i)
	for i < len(ln) && !isSpace(ln[i]) && ln[i] != ':' { // signal name
		i++
	}
	i = skipSpace(ln, i)
	start := i
	for i < len(ln) && !isSpace(ln[i]) && ln[i] != ':' {
		i++
	}
	tok := ln[start:i]
	if len(tok) < 3 || tok[0] != 'm' || tok[len(tok)-1] != 'M' {
		return false
	}
	for _, c := range tok[1 : len(tok)-1] {
		if c < '0' || c > '9' {
			return false
		}
	}
	tok[len(tok)-1] = ' '
	return true
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' }

// blankLine keeps only the line end, so later line numbers hold.
func blankLine(ln []byte) []byte {
	if bytes.HasSuffix(ln, []byte("\r\n")) {
		return []byte("\r\n")
	}
	if bytes.HasSuffix(ln, []byte("\n")) {
		return []byte("\n")
	}
	return nil
}

// parseMulVal reads `SG_MUL_VAL_ <msg id> <signal> <switch> <lo>-<hi>[, …];`.
func parseMulVal(name string, line int, s string) (mulVal, error) {
	s = strings.TrimSpace(s)
	body, ok := strings.CutSuffix(s, ";")
	if !ok {
		return mulVal{}, errorf(name, line, "SG_MUL_VAL_ must end with ';' on the same line")
	}
	f := strings.Fields(body)
	if len(f) < 5 {
		return mulVal{}, errorf(name, line, "SG_MUL_VAL_ needs a message id, a signal, a multiplexer and at least one range")
	}
	id, err := strconv.ParseUint(f[1], 10, 32)
	if err != nil {
		return mulVal{}, errorf(name, line, "SG_MUL_VAL_ message id is not a decimal number")
	}
	mv := mulVal{line: line, msgID: uint32(id), signal: f[2], switchName: f[3]}
	for _, r := range strings.Split(strings.Join(f[4:], ""), ",") {
		if r == "" {
			continue
		}
		lo, hi, ok := strings.Cut(r, "-")
		a, err1 := strconv.ParseInt(lo, 10, 64)
		b, err2 := strconv.ParseInt(hi, 10, 64)
		if !ok || err1 != nil || err2 != nil || a > b {
			return mulVal{}, errorf(name, line, "SG_MUL_VAL_ range %q is not lo-hi", cleanReason(r))
		}
		if len(mv.ranges) == MaxMuxRanges {
			return mulVal{}, errorf(name, line, "SG_MUL_VAL_ has more than %d ranges", MaxMuxRanges)
		}
		mv.ranges = append(mv.ranges, [2]int64{a, b})
	}
	if len(mv.ranges) == 0 {
		return mulVal{}, errorf(name, line, "SG_MUL_VAL_ has no range")
	}
	return mv, nil
}
