package j1708

// maxLogLine bounds one log line: a timestamp, a tag and 21 bytes in hex.
const maxLogLine = 256

// Checksum reports whether msg's bytes sum to 0 mod 256.
func Checksum(msg []byte) bool {
	var s byte
	for _, b := range msg {
		s += b
	}
	return s == 0
}
