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
// construction, whatever struct a float came from. b itself is returned
// when no number changes, as in most answers: copying a 100 KB page to
// change nothing cost a list call more than its floats.
func roundFloats(b []byte) []byte {
	if !bytes.ContainsAny(b, ".eE") {
		return b
	}
	var out []byte // nil until a number changes; then b[:done] rewritten
	done := 0      // b[:done] is in out
	var num [32]byte
	for i := 0; i < len(b); {
		switch ch := b[i]; {
		case ch == '"':
			i = stringEnd(b, i+1)
		case ch == '-' || ch >= '0' && ch <= '9':
			j, fractional := i, false
			for j < len(b) && isNumberByte(b[j]) {
				fractional = fractional || b[j] == '.' || b[j] == 'e' || b[j] == 'E'
				j++
			}
			if fractional {
				if r, changed := rounded(num[:0], b[i:j]); changed {
					if out == nil {
						out = make([]byte, 0, len(b))
					}
					out = append(append(out, b[done:i]...), r...)
					done = j
				}
			}
			i = j
		default:
			i++
		}
	}
	if out == nil {
		return b
	}
	return append(out, b[done:]...)
}

// rounded appends tok, a JSON number with a fraction or an exponent,
// rounded to floatDigits, to dst, and reports whether that differs from
// tok; a token ParseFloat refuses is left as it is.
func rounded(dst, tok []byte) ([]byte, bool) {
	f, err := strconv.ParseFloat(string(tok), 64)
	if err != nil {
		return nil, false
	}
	r := strconv.AppendFloat(dst, f, 'g', floatDigits, 64)
	return r, !bytes.Equal(r, tok)
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
