// Package heapsize says how many bytes the Go heap really spends on an
// allocation, so a store's byte bound counts memory, not payload length.
//
// The runtime rounds every small allocation up to one of its size classes
// (internal/runtime/gc/sizeclasses.go), adds an 8-byte header to objects
// with pointers larger than 512 bytes (Go 1.22's malloc headers), and
// gives large objects whole 8 KiB pages. A 700-byte SIP message is a
// 704-byte object; a 24-byte string header in a struct is no object at
// all. Stores add up these figures for what they keep; each store's test
// checks the sum against runtime.MemStats heap deltas.
package heapsize
