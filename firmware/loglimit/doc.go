// Package loglimit keeps a flood of like log lines from filling stderr: a
// capture file with 200,000 bad lines, a client hammering a cap, a disk
// that refuses every audit record. It wraps a slog.Handler; records of
// one kind (level, message and the port, file, source or peer they name)
// pass up to a burst per window, and the rest are counted and reported
// in one "log lines suppressed" record with their count when the window
// ends. Debug records are not limited: an operator who asks for them
// asked for the volume.
package loglimit
