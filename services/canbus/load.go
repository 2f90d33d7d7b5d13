package canbus

// FrameBits is the length on the wire of a classic data frame with n data
// bytes, interframe space included, with the worst-case stuffing estimate
// of Davis, Burns, Bril, Lukkien (2007): g+8n+13+⌊(g+8n−1)/4⌋ where g is
// 34 stuffable control bits for an 11-bit id and 54 for a 29-bit id.
func FrameBits(ext bool, n int) int {
	g := 34
	if ext {
		g = 54
	}
	return g + 8*n + 13 + (g+8*n-1)/4
}
