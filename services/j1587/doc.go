// Package j1587 decodes SAE J1587 parameters carried in J1708 messages
// (and J2497/PLC4TRUCKS trailer messages, which use the same layout) and
// keeps them in a bounded store: the raw messages on a ring, the latest
// value per (MID, PID), the diagnostic-code table of PID 194, per-MID
// message rates and checksum error counts.
//
// It takes plain values (a time and the message bytes, MID through
// checksum) so it never depends on a capture driver. The Decoder is a
// reusable struct whose Decode resets every field and does not allocate;
// parameter data alias the message. Text values (VIN, component and
// software identification) are returned as bytes marked untrusted: the MCP
// layer fences them.
//
// Scalings follow the public PID table in grimm-co/stm32-j1708
// (j1708/pid_info.py, BSD-3-Clause), in US units; see docs/j1587.md.
package j1587
