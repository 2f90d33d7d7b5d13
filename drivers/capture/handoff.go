package capture

import "context"

// DefaultHandoffDepth is the per-port queue between a driver and its
// analysers: about one second of a busy 100 Mbit/s mirror (~8 k small
// frames/s) rounded to a power of two.
const DefaultHandoffDepth = 8192

// Handoff is the bounded queue from one driver to its analysers. A driver
// never blocks on it: when the queue is full the frame is dropped and
// counted under DropHandoffFull in the port's Counters.
type Handoff struct {
	ch       chan Frame
	counters *Counters
}

// NewHandoff returns a queue of depth frames whose deliveries and drops are
// counted in c. depth < 1 means DefaultHandoffDepth.
func NewHandoff(depth int, c *Counters) *Handoff {
	if depth < 1 {
		depth = DefaultHandoffDepth
	}
	return &Handoff{ch: make(chan Frame, depth), counters: c}
}

// Offer queues f without blocking. It reports whether f was queued; a frame
// that was not is already counted as a drop.
func (h *Handoff) Offer(f Frame) bool {
	select {
	case h.ch <- f:
		h.counters.Frame(f.Time, f.origLen())
		return true
	default:
		h.counters.Drop(DropHandoffFull, 1)
		return false
	}
}

// Put queues f, waiting while the queue is full. Finite sources (files) use
// it: nothing is lost when the reader is faster than the analysers. It
// returns ctx's error if ctx ends first.
func (h *Handoff) Put(ctx context.Context, f Frame) error {
	select {
	case h.ch <- f:
		h.counters.Frame(f.Time, f.origLen())
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Frames is the receive side, closed by Close.
func (h *Handoff) Frames() <-chan Frame { return h.ch }

// Close ends the queue once its driver has stopped offering.
func (h *Handoff) Close() { close(h.ch) }

func (f Frame) origLen() int {
	if f.OrigLen > len(f.Data) {
		return f.OrigLen
	}
	return len(f.Data)
}
