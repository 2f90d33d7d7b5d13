// Package j1708 captures J1708 messages: from a serial line, from text
// logs, and from Vehicle Spy CSV exports.
//
// Serial capture (Source) runs at 9600 8N1 through go.bug.st/serial. The
// Framer turns bytes with arrival times into messages: it frames on idle
// gaps and resynchronises on the checksum (all bytes sum to 0 mod 256,
// 2..21 bytes), splitting glued messages and skipping noise, and counts
// every fault. It is pure and does not allocate.
//
// Log format, one message a line, hex including the checksum:
//
//	(1.688000) j1708 80020028FF55007900B72600B80000F4
//
// Timestamps are seconds (from any origin); J2497 (PLC4TRUCKS) lines say
// j2497 instead of j1708 and their frames carry LinkJ2497.
package j1708
