// Package j1708 captures J1708 messages: from text logs now, and from a
// serial line (framed by idle gaps and checksums) where a board has one.
//
// Log format, one message a line, hex including the checksum:
//
//	(1.688000) j1708 80020028FF55007900B72600B80000F4
//
// Timestamps are seconds (from any origin); J2497 (PLC4TRUCKS) lines say
// j2497 instead of j1708.
package j1708
