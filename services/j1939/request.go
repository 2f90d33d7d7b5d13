package j1939

// ParseRequest returns the PGN a Request (PGN 59904) asks for: three
// bytes, little-endian. ok is false for a shorter payload.
func ParseRequest(b []byte) (pgn uint32, ok bool) {
	if len(b) < 3 {
		return 0, false
	}
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16, true
}
