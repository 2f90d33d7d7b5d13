package mcp

import (
	"bytes"
	"strconv"
)

// floatDigits is the stated precision of every fractional number in an
// answer: 12 significant digits. Binary floating point writes 0.1+0.2 as
// 0.30000000000000004 and a scaled sensor value as 14.100000000000001;
// the noise sits past the 15th digit, and no measurement fieldtap makes
// is good to 12 (a microsecond on an epoch time is the 16th).
const floatDigits = 12

// roundFloats rewrites every number with a fraction or exponent in the
// JSON b to floatDigits significant digits, leaving integers (sequence
// numbers, ids, counters) and strings exactly as they are. Doing it on
// the encoded answer makes the precision hold for every tool by
// construction, whatever struct a float came from.
func roundFloats(b []byte) []byte {
	if !bytes.ContainsAny(b, ".eE") {
		return b
	}
	out := make([]byte, 0, len(b))
	inString, escaped := false, false
	for i := 0; i < len(b); i++ {
		ch := b[i]
		if inString {
			out = append(out, ch)
			switch {
			case escaped:
				escaped = false
			case ch == '\\':
				escaped = true
			case ch == '"':
				inString = false
			}
			continue
		}
		if ch == '"' {
			inString = true
			out = append(out, ch)
			continue
		}
		if ch != '-' && (ch < '0' || ch > '9') {
			out = append(out, ch)
			continue
		}
		j := i
		fractional := false
		for j < len(b) && isNumberByte(b[j]) {
			if b[j] == '.' || b[j] == 'e' || b[j] == 'E' {
				fractional = true
			}
			j++
		}
		tok := b[i:j]
		if f, err := strconv.ParseFloat(string(tok), 64); fractional && err == nil {
			out = strconv.AppendFloat(out, f, 'g', floatDigits, 64)
		} else {
			out = append(out, tok...)
		}
		i = j - 1
	}
	return out
}

func isNumberByte(c byte) bool {
	return c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'
}
