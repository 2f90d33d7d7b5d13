package socketcan

// parseCounter reads a decimal sysfs counter ("123\n").
func parseCounter(b []byte) (uint64, bool) {
	var v uint64
	n := 0
	for _, c := range b {
		if c == '\n' {
			break
		}
		if c < '0' || c > '9' || n == maxCounterDigits {
			return 0, false
		}
		v = v*10 + uint64(c-'0')
		n++
	}
	return v, n > 0
}

// maxCounterDigits keeps a uint64 from overflowing (2^64 has 20 digits).
const maxCounterDigits = 19
