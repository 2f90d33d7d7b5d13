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
	for i := 0; i < len(b); {
		switch ch := b[i]; {
		case ch == '"':
			j := stringEnd(b, i+1)
			out = append(out, b[i:j]...)
			i = j
		case ch == '-' || ch >= '0' && ch <= '9':
			j, fractional := i, false
			for j < len(b) && isNumberByte(b[j]) {
				fractional = fractional || b[j] == '.' || b[j] == 'e' || b[j] == 'E'
				j++
			}
			out = appendNumber(out, b[i:j], fractional)
			i = j
		default:
			j := i + 1
			for j < len(b) && b[j] != '"' && b[j] != '-' && (b[j] < '0' || b[j] > '9') {
				j++
			}
			out = append(out, b[i:j]...)
			i = j
		}
	}
	return out
}

// appendNumber appends the number tok, rounded when it has a fraction or
// an exponent; integers are copied without parsing.
func appendNumber(out, tok []byte, fractional bool) []byte {
	if fractional {
		if f, err := strconv.ParseFloat(string(tok), 64); err == nil {
			return strconv.AppendFloat(out, f, 'g', floatDigits, 64)
		}
	}
	return append(out, tok...)
}

// stringEnd is the index just past the quote that closes the JSON string
// whose text starts at i (len(b) if none does). It jumps from quote to
// quote, because the answers are mostly strings: a quote after an odd
// run of backslashes is escaped.
func stringEnd(b []byte, i int) int {
	for {
		k := bytes.IndexByte(b[i:], '"')
		if k < 0 {
			return len(b)
		}
		i += k
		n := 0
		for n < i && b[i-1-n] == '\\' {
			n++
		}
		if n%2 == 0 {
			return i + 1
		}
		i++
	}
}

func isNumberByte(c byte) bool {
	return c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'
}
