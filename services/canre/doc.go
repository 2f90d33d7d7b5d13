// Package canre holds reverse-engineering helpers for one CAN id over a
// window of a port's stored frames: rolling counters, checksum candidates
// (XOR, sums, CRC-8s over the other bytes), per-bit and per-byte entropy,
// signal candidates from bit-flip boundaries, and the correlation of a
// candidate field with a reference (a J1939 SPN, another field).
//
// Every answer is bounded, names its method, and says why a figure is
// missing instead of guessing one. The package reads canbus snapshots and
// never imports drivers/ beyond wire, or mcp/.
package canre
