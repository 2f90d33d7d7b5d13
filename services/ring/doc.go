// Package ring is the bounded, append-only store every capture store is
// built on: a ring of items limited by count and by bytes, whose oldest
// items are evicted (and counted) to make room, with a revision counter and
// snapshots that readers can walk without holding a lock.
//
// Items live in fixed-size chunks, and an item a snapshot can see is
// written once (a ring may reuse a chunk only if no snapshot ever held
// it). A snapshot copies only the slice header of the chunk list, so
// taking one costs the same at ten items or ten million, and later appends
// or evictions never change what a snapshot shows.
package ring
