// Package j1708test simulates the far side of a J1708 transceiver for
// tests: what the box writes comes back to it, as an RS-485 transceiver
// wired for J1708 echoes the bus, and a collision can be injected.
package j1708test

import (
	"context"
	"io"
	"sync"
)

// readChunk is one read from the box's side; a J1708 message is at most
// 21 bytes, so one read usually holds a whole one.
const readChunk = 256

// Bus echoes every byte the box writes. It is safe for concurrent use.
type Bus struct {
	rw io.ReadWriter

	mu       sync.Mutex
	received []byte // everything the box wrote, in order
	collide  int    // echoes still to corrupt
	corrupt  int    // echoes corrupted so far
}

// New returns a bus on rw, the pty master whose slave the driver opens.
func New(rw io.ReadWriter) *Bus {
	return &Bus{rw: rw}
}

// CollideNext makes the echo of the next n chunks the box writes differ
// in their first byte, as if another node drove the line at once.
func (b *Bus) CollideNext(n int) {
	b.mu.Lock()
	b.collide += n
	b.mu.Unlock()
}

// Serve echoes until ctx ends or the pty closes.
func (b *Bus) Serve(ctx context.Context) {
	buf := make([]byte, readChunk)
	for ctx.Err() == nil {
		n, err := b.rw.Read(buf)
		if err != nil {
			return
		}
		echo := append([]byte(nil), buf[:n]...)
		b.mu.Lock()
		b.received = append(b.received, echo...)
		if b.collide > 0 && n > 0 {
			b.collide--
			b.corrupt++
			echo[0] ^= 0xFF
		}
		b.mu.Unlock()
		if _, err := b.rw.Write(echo); err != nil {
			return
		}
	}
}

// Received returns a copy of every byte the box wrote.
func (b *Bus) Received() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]byte(nil), b.received...)
}

// Corrupted is how many echoes were corrupted.
func (b *Bus) Corrupted() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.corrupt
}

// Inject puts bytes on the bus from another node.
func (b *Bus) Inject(p []byte) error {
	_, err := b.rw.Write(p)
	return err
}
