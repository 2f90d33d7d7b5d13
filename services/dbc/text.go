package dbc

import (
	"bytes"
	"fmt"
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
	// warnings name the lines of deviations from the format read anyway
	// (a statement without its closing ';').
	warnings []string
	// warningsLeft counts the warnings over MaxWarnings, not kept.
	warningsLeft int
}

// warnf keeps a warning about line, up to MaxWarnings.
func (p *prepared) warnf(line int, format string, a ...any) {
	if len(p.warnings) == MaxWarnings {
		p.warningsLeft++
		return
	}
	p.warnings = append(p.warnings, "line "+strconv.Itoa(line)+": "+fmt.Sprintf(format, a...))
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
			mv, err := parseMulVal(name, lineNo, string(ln), p)
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
	closeStatements(lines, p)
	p.text = bytes.Join(lines, nil)
	return p, nil
}

// needsSemicolon are the statements the format ends with ';'. A file
// written by hand or by a lenient tool sometimes omits it at the end of
// a line; cantools reads such a file, einride stops at the next
// statement. BO_, SG_, BU_ and the header statements end at the line end.
var needsSemicolon = map[string]bool{
	"CM_": true, "BA_DEF_": true, "BA_DEF_DEF_": true, "BA_": true, "VAL_": true, "VAL_TABLE_": true,
	"SIG_VALTYPE_": true, "BA_DEF_REL_": true, "BA_DEF_DEF_REL_": true, "BA_REL_": true, "BO_TX_BU_": true,
	"SIG_GROUP_": true, "EV_": true, "ENVVAR_DATA_": true, "SGTYPE_": true, "SIG_TYPE_REF_": true,
	"BA_DEF_SGTYPE_": true, "BA_SGTYPE_": true, "SGTYPE_VAL_": true, "SIG_TYPE_DEF_": true,
}

// startsStatement are the keywords that begin a statement at a line
// start: one of them while a statement is still open means that
// statement lacks its ';'.
var startsStatement = map[string]bool{
	"VERSION": true, "NS_": true, "BS_:": true, "BS_": true, "BU_:": true, "BU_": true, "BO_": true, "SG_": true,
}

// closeStatements adds the ';' a statement lacks at the end of its last
// line, when the next statement starts on a later line or the file ends,
// and warns naming that line. Strings may span lines (a CM_ text) and
// hold ';' or keywords; they are skipped. Only a keyword followed by
// more on its line starts a statement: NS_'s list names keywords alone.
func closeStatements(lines [][]byte, p *prepared) {
	open := "" // keyword of the statement waiting for its ';'
	last := -1 // index of its last line with text
	inString := false
	closeOpen := func() {
		if open == "" {
			return
		}
		ln := lines[last]
		body := bytes.TrimRight(ln, " \t\r\n")
		fixed := make([]byte, 0, len(ln)+1)
		fixed = append(append(append(fixed, body...), ';'), ln[len(body):]...)
		lines[last] = fixed
		p.warnf(last+1, "%s statement does not end with ';': read as if it did", open)
		open = ""
	}
	for i, ln := range lines {
		if !inString {
			if f := strings.Fields(string(ln)); len(f) > 1 && (needsSemicolon[f[0]] || startsStatement[f[0]]) {
				closeOpen()
				if needsSemicolon[f[0]] {
					open = f[0]
				}
			}
		}
		for j := 0; j < len(ln); j++ {
			switch c := ln[j]; {
			case inString && c == '\\' && j+1 < len(ln) && ln[j+1] == '"':
				j++
			case c == '"':
				inString = !inString
			case !inString && c == ';':
				open = ""
			}
		}
		if open != "" && len(bytes.TrimSpace(ln)) > 0 {
			last = i
		}
	}
	if !inString {
		closeOpen()
	}
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
// A missing ';' is warned about on p.
func parseMulVal(name string, line int, s string, p *prepared) (mulVal, error) {
	s = strings.TrimSpace(s)
	body, ok := strings.CutSuffix(s, ";")
	if !ok {
		p.warnf(line, "SG_MUL_VAL_ statement does not end with ';': read as if it did")
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
