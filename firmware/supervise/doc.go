// Package supervise keeps a long-running part of the box running: one
// attempt (run1) is a plain function that returns an error, and a
// Supervisor calls it again after a failure, with backoff, counting each
// restart and keeping the last error for capture_status. It is in-process
// and cancelled by context, as gokrazy's supervise is for processes.
package supervise
