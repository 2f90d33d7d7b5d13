// Package j1708 captures J1708 messages: from a serial line, from text
// logs, and from Vehicle Spy CSV exports.
//
// Serial capture (Source) runs at 9600 8N1 through go.bug.st/serial. The
// Framer turns bytes with arrival times into messages: it frames on idle
// gaps and resynchronises on the checksum (all bytes sum to 0 mod 256,
// 2..21 bytes), splitting glued messages and skipping noise, and counts
// every fault. It is pure and does not allocate.
//
// The write side (WriteFrame) shares the capture loop's port: the loop
// tells it when each chunk arrived and hands it the bytes read while a
// message is sent. It is listen-only until SetTransmit(true), waits for
// the J1708 bus access time at its priority (AccessTime), writes the
// whole message in one write, reads it back, and treats a differing byte
// as a collision: counted, retried after a longer wait, MaxAttempts sends
// at most. j1708test simulates the echoing transceiver on a pty.
//
// Log format, one message a line, hex including the checksum:
//
//	(1.688000) j1708 80020028FF55007900B72600B80000F4
//
// Timestamps are seconds (from any origin); J2497 (PLC4TRUCKS) lines say
// j2497 instead of j1708 and their frames carry wire.LinkJ2497.
package j1708
