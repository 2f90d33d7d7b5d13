package canlog

import "fieldtap/drivers/wire"

// maxLine bounds one log line. A -l line for classic CAN is under 60
// bytes and a pretty one under 80; 512 leaves room for odd padding while
// keeping a garbage file from growing the read buffer.
const maxLine = 512

// Looks reports whether line is a candump line of either shape, for
// content sniffing.
func Looks(line []byte) bool {
	var r wire.CandumpRecord
	return wire.DecodeCandump(line, &r) == nil
}
