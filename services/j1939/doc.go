// Package j1939 decodes SAE J1939 traffic from plain CAN values (time,
// 29-bit id, data): identifiers (priority, EDP, DP, PF, PS, PGN, SA, DA),
// TP.CM/TP.DT reassembly of BAM and RTS/CTS transfers with the J1939-21
// timeouts, address claims and NAME fields, requests, DM1/DM2 in the SAE
// J1939-73 layout, and a curated set of public SPNs.
//
// Decoder is the per-port, single-goroutine hot path (no allocation per
// frame); Store keeps what the tools read, bounded everywhere a sender
// chooses the key. The package never imports drivers/: the daemon decodes
// SocketCAN bytes and calls Store.Feed with plain values.
package j1939
