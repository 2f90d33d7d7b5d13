// Package canlog reads and writes candump log files as a capture.Source.
//
// Two line shapes are read, chosen per line so a file may mix them:
//
//	(1608041700.316550) can0 18FECA00#0102        candump -l
//	(1608041700.316550) can0 18FECA00##10102      candump -l, CAN FD
//	 (000.005001)  can0  18FEDF00   [8]  8A A0 …   candump -ta / -tz / -td
//
// CAN FD frames (`##` and a flags digit, up to 64 bytes) are read and
// written as can-utils does; a pretty line cannot carry FD flags.
// Hex is accepted in either case and ids may be space-padded. A malformed
// or overlong line is counted, logged with its line number, and skipped;
// the rest of the file is still read. The line codec is drivers/wire's
// (DecodeCandump, AppendCandumpFrame); Writer produces -l.
package canlog
