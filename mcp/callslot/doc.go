// Package callslot carries a tools/call's concurrency slot in its context,
// from the HTTP front door that took it (mcp/front's call caps) to a tool
// that will wait on a person (a transmit confirmation), which gives it
// back before it waits: a client answering, or not, holds none of the
// box's slots.
//
// It imports nothing of this project, so the front door and the tool
// framework (mcp) share it without importing each other.
package callslot
