// Package capturetest helps tests read what a driver hands off.
package capturetest

import (
	"slices"

	"fieldtap/drivers/capture"
)

// Frames receives every batch of h, copies each frame's data (a batch may
// borrow the driver's buffers), releases the batch, and sends the copies
// on the returned channel, which closes when h does. Reading it is what
// a test needs; a consumer that cares for speed uses Receive directly.
func Frames(h *capture.Handoff) <-chan capture.Frame {
	out := make(chan capture.Frame)
	go func() {
		defer close(out)
		for {
			b, ok := h.Receive()
			if !ok {
				return
			}
			frames := make([]capture.Frame, len(b.Frames))
			for i, f := range b.Frames {
				f.Data = slices.Clone(f.Data)
				frames[i] = f
			}
			h.Release(b)
			for _, f := range frames {
				out <- f
			}
		}
	}()
	return out
}

// Drain receives and releases every batch of h until it closes and
// returns how many frames they held: the cheapest consumer, for
// benchmarks of what a driver costs.
func Drain(h *capture.Handoff) int {
	n := 0
	for {
		b, ok := h.Receive()
		if !ok {
			return n
		}
		n += len(b.Frames)
		h.Release(b)
	}
}
