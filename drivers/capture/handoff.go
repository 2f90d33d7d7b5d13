package capture

import (
	"context"
	"sync"
)

// DefaultHandoffDepth is the per-port queue between a driver and its
// analysers: about one second of a busy 100 Mbit/s mirror (~8 k small
// frames/s) rounded to a power of two.
const DefaultHandoffDepth = 8192

// Batch is frames handed over together, oldest first: the frames of one
// AF_PACKET block, or of one read of a capture file. Their Data may
// borrow the source's buffers; the consumer calls Handoff.Release when it
// is done with them, which hands the buffers back.
type Batch struct {
	Frames  []Frame
	release func()
}

// NewBatch wraps frames whose data stays valid until release is called
// (nil when the frames own their data).
func NewBatch(frames []Frame, release func()) Batch { return Batch{Frames: frames, release: release} }

// Handoff is the bounded queue from one driver to its analysers. At most
// depth frames are in flight, counted from the moment they are queued
// until the consumer releases them, so the queue's memory is bounded by
// depth frames whatever the consumer holds.
//
// A live driver never blocks on it: Offer and OfferBatch drop what does
// not fit and count it under DropHandoffFull in the port's Counters. A
// file reader waits for room with Put and PutBatch, so nothing is lost.
// The consumer takes whole batches with Receive: frames offered one by
// one since its last Receive come as one batch, so a busy port costs one
// lock and no channel operation per frame.
type Handoff struct {
	mu       sync.Mutex
	queue    []Batch // waiting batches, oldest first
	tail     []Frame // frames queued one by one since the last batch or Receive
	inflight int     // frames queued or held by the consumer
	depth    int
	closed   bool
	wake     chan struct{} // the consumer may have work (or the queue closed)
	room     chan struct{} // a waiting producer may have room
	sleeping bool          // the consumer waits on wake: the next push signals it
	blocked  bool          // a producer waits on room: the next release signals it
	spare    [][]Frame     // released tails, reused so a steady port allocates nothing
	counters *Counters
}

// NewHandoff returns a queue of depth frames whose deliveries and drops are
// counted in c. depth < 1 means DefaultHandoffDepth.
func NewHandoff(depth int, c *Counters) *Handoff {
	if depth < 1 {
		depth = DefaultHandoffDepth
	}
	return &Handoff{depth: depth, counters: c, wake: make(chan struct{}, 1), room: make(chan struct{}, 1)}
}

// Depth is the most frames in flight.
func (h *Handoff) Depth() int { return h.depth }

// InFlight is how many frames are queued or held by the consumer.
func (h *Handoff) InFlight() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.inflight
}

// Offer queues f without blocking. It reports whether f was queued; a frame
// that was not is already counted as a drop.
func (h *Handoff) Offer(f Frame) bool {
	h.mu.Lock()
	if h.inflight >= h.depth {
		h.mu.Unlock()
		h.counters.Drop(DropHandoffFull, 1)
		return false
	}
	h.push(f)
	wake := h.wakeLocked()
	h.mu.Unlock()
	h.counters.Frame(f.Time, f.origLen())
	if wake {
		signal(h.wake)
	}
	return true
}

// wakeLocked reports whether the consumer sleeps and must be signalled,
// clearing the flag; the caller holds mu.
func (h *Handoff) wakeLocked() bool {
	w := h.sleeping
	h.sleeping = false
	return w
}

// Put queues f, waiting while the queue is full. Finite sources (files) use
// it: nothing is lost when the reader is faster than the analysers. It
// returns ctx's error if ctx ends first.
func (h *Handoff) Put(ctx context.Context, f Frame) error {
	for {
		h.mu.Lock()
		if h.inflight < h.depth {
			h.push(f)
			wake := h.wakeLocked()
			h.mu.Unlock()
			h.counters.Frame(f.Time, f.origLen())
			if wake {
				signal(h.wake)
			}
			return nil
		}
		h.blocked = true
		h.mu.Unlock()
		if err := h.waitRoom(ctx); err != nil {
			return err
		}
	}
}

// push appends one frame to the tail; the caller holds mu and has room.
func (h *Handoff) push(f Frame) {
	if h.tail == nil && len(h.spare) > 0 {
		h.tail, h.spare = h.spare[len(h.spare)-1], h.spare[:len(h.spare)-1]
	}
	h.tail = append(h.tail, f)
	h.inflight++
}

// OfferBatch queues as many of b's frames as fit without blocking, oldest
// first; the rest are counted as drops. It returns how many were queued.
// b is released by the consumer, or at once when nothing was queued.
func (h *Handoff) OfferBatch(b Batch) int {
	h.mu.Lock()
	n := min(len(b.Frames), h.depth-h.inflight)
	if n <= 0 {
		h.mu.Unlock()
		h.counters.Drop(DropHandoffFull, uint64(len(b.Frames)))
		b.done()
		return 0
	}
	dropped := len(b.Frames) - n
	b.Frames = b.Frames[:n]
	h.enqueue(b)
	wake := h.wakeLocked()
	h.mu.Unlock()
	h.count(b.Frames)
	if dropped > 0 {
		h.counters.Drop(DropHandoffFull, uint64(dropped))
	}
	if wake {
		signal(h.wake)
	}
	return n
}

// PutBatch queues b, waiting for room for all of it; a batch larger than
// the whole queue waits until the queue is empty. It returns ctx's error
// (and releases b) if ctx ends first.
func (h *Handoff) PutBatch(ctx context.Context, b Batch) error {
	for {
		h.mu.Lock()
		if h.inflight+len(b.Frames) <= h.depth || h.inflight == 0 {
			h.enqueue(b)
			wake := h.wakeLocked()
			h.mu.Unlock()
			h.count(b.Frames)
			if wake {
				signal(h.wake)
			}
			return nil
		}
		h.blocked = true
		h.mu.Unlock()
		if err := h.waitRoom(ctx); err != nil {
			b.done()
			return err
		}
	}
}

// enqueue queues b after any frames queued one by one; the caller holds mu.
func (h *Handoff) enqueue(b Batch) {
	h.sealTail()
	h.queue = append(h.queue, b)
	h.inflight += len(b.Frames)
}

// sealTail turns the frames queued one by one into a batch of their own,
// whose release recycles the slice; the caller holds mu.
func (h *Handoff) sealTail() {
	if len(h.tail) == 0 {
		return
	}
	frames := h.tail
	h.tail = nil
	h.queue = append(h.queue, Batch{Frames: frames, release: func() { h.recycle(frames) }})
}

// recycle keeps a released tail for reuse, cleared so it pins no data.
func (h *Handoff) recycle(frames []Frame) {
	clear(frames)
	h.mu.Lock()
	if len(h.spare) < maxSpare {
		h.spare = append(h.spare, frames[:0])
	}
	h.mu.Unlock()
}

// maxSpare bounds the recycled tails: the consumer holds one batch while
// the producer fills the next, so two are enough to stop allocating.
const maxSpare = 2

func (h *Handoff) waitRoom(ctx context.Context) error {
	select {
	case <-h.room:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (h *Handoff) count(frames []Frame) {
	if len(frames) == 0 {
		return
	}
	var bytes int
	first, last := frames[0].Time, frames[0].Time
	for i := range frames {
		f := &frames[i]
		bytes += f.origLen()
		// Frames come mostly in order: one comparison for most.
		if f.Time.After(last) {
			last = f.Time
		} else if f.Time.Before(first) {
			first = f.Time
		}
	}
	h.counters.Frames(len(frames), bytes, first, last)
}

// Receive waits for the next batch and returns it; false once the queue is
// closed and every batch was received. The consumer must Release each
// batch when done with its frames.
func (h *Handoff) Receive() (Batch, bool) {
	for {
		h.mu.Lock()
		if len(h.queue) == 0 {
			h.sealTail()
		}
		if len(h.queue) > 0 {
			b := h.queue[0]
			h.queue[0] = Batch{}
			h.queue = h.queue[1:]
			if len(h.queue) == 0 {
				h.queue = h.queue[:0:0] // let the array go once drained
			}
			h.mu.Unlock()
			return b, true
		}
		if h.closed {
			h.mu.Unlock()
			return Batch{}, false
		}
		h.sleeping = true
		h.mu.Unlock()
		<-h.wake
	}
}

// Release hands b's frames back: their room in the queue, and the
// source's buffers they borrowed.
func (h *Handoff) Release(b Batch) {
	h.mu.Lock()
	h.inflight -= len(b.Frames)
	blocked := h.blocked
	h.blocked = false
	h.mu.Unlock()
	b.done()
	if blocked {
		signal(h.room)
	}
}

func (b Batch) done() {
	if b.release != nil {
		b.release()
	}
}

// Close ends the queue once its driver has stopped offering; batches
// already queued are still received.
func (h *Handoff) Close() {
	h.mu.Lock()
	h.closed = true
	h.mu.Unlock()
	signal(h.wake)
}

// signal wakes one waiter without blocking; a wake-up already pending
// covers this one.
func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// origLen reads f in place: a Frame copied to the stack and read back at
// once stalls on store forwarding, once a frame in count.
func (f *Frame) origLen() int {
	if f.OrigLen > len(f.Data) {
		return f.OrigLen
	}
	return len(f.Data)
}
