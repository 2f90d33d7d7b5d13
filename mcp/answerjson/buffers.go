package answerjson

import "sync"

// Answer buffers are reused: a list answer is ~100 KB, and allocating
// one per call kept the collector busy over a heap of 100 000 dialogs.
var buffers = sync.Pool{New: func() any { return new([]byte) }}

// maxPooled keeps the pool from holding the rare huge answer: twice the
// default response budget (mcp.DefaultMaxResponseBytes, 1 MiB), an
// answer with its structuredContent copy. This package cannot import mcp
// to derive it, so TestPoolBoundIsTwiceTheDefaultBudget checks it.
const maxPooled = 2 << 20

// Buffer is an answer buffer to write into; give it back with Recycle.
func Buffer() *[]byte { return buffers.Get().(*[]byte) }

// Recycle gives b back for another answer, unless it grew past maxPooled.
func Recycle(b *[]byte) {
	if cap(*b) <= maxPooled {
		buffers.Put(b)
	}
}
