// Package ethernet captures a live Ethernet interface (a switch's SPAN or
// mirror port) with AF_PACKET TPACKET_V3, its ring read directly through
// golang.org/x/sys/unix: no cgo, no libpcap.
//
// The socket is promiscuous and sees every frame the interface receives.
// The kernel fills a ring of blocks the driver reads without a copy; each
// frame is copied once into the Frame it hands off, because the ring slot
// is reused as soon as the next frame is read.
//
// A capture filter is optional. It is a classic BPF program in the form
// `tcpdump -dd EXPR` prints (C initialisers, one `{ code, jt, jf, k },` a
// line) or `tcpdump -ddd EXPR` prints (a count line, then `code jt jf k`
// in decimal), so an operator compiles it on any machine with tcpdump and
// pastes it into the config; the box needs no filter compiler. The program
// is checked once (jumps in bounds, ends in a return, at most 4096
// instructions) and the kernel checks it again when it is attached.
//
// Losses are never silent. The kernel's PACKET_STATISTICS are read every
// second and when the capture stops: frames the ring had no room for are
// the port's "kernel" drops, and the number of times the ring froze
// (every block full, waiting for the reader) is "kernel_queue_freezes". A
// frame the analysers had no room for is a "handoff_full" drop, counted
// by the hand-off.
package ethernet
