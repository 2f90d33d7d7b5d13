// Package capture holds what every capture driver shares: the Frame a driver
// emits, the per-port counters it keeps, the Source interface the daemon
// starts and stops, and the bounded Handoff that carries frames to the
// analysers and counts what it had to drop.
//
// It is a leaf: it does no I/O and imports no other fieldtap package.
package capture
