package canbus

import "fieldtap/drivers/wire"

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

// FDFrameBits is the length of a CAN FD data frame with n data bytes,
// every bit counted at the nominal bitrate: the box does not know a
// port's data bitrate, so with BRS the data phase is shorter on the wire
// and a load figure from this is an upper bound. The control field is
// g = 22 bits for an 11-bit id and 41 for a 29-bit id (RRS, IDE, FDF,
// res, BRS, ESI, DLC), dynamically stuffed as FrameBits does; then the
// stuff count (4 bits), the CRC (17 bits up to 16 data bytes, 21 above)
// with its fixed stuff bit every 4 bits, and 13 bits of delimiters, ACK,
// EOF and interframe space. n is padded up to the length the DLC says.
func FDFrameBits(ext bool, n int) int {
	g := 22
	if ext {
		g = 41
	}
	n = wire.CANFDPadded(n)
	crc := 17
	if n > 16 {
		crc = 21
	}
	return 1 + g + 8*n + (g+8*n)/4 + 4 + crc + (4+crc+3)/4 + 13
}
