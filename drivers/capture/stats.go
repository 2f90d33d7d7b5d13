package capture

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sync"
	"time"
)

// Drop causes shared by several drivers. Drivers may add their own.
const (
	DropHandoffFull = "handoff_full" // analysers fell behind; the frame was not queued
	DropKernel      = "kernel"       // the kernel's ring overflowed (PACKET_STATISTICS)
	// DropUndecodable is a delivered frame its analyser could not read
	// (a CAN frame whose bytes are not a struct can_frame).
	DropUndecodable = "undecodable"
)

// Stats is a snapshot of one port's counters.
type Stats struct {
	Frames uint64
	Bytes  uint64
	Drops  map[string]uint64 // by cause
	Errors map[string]uint64 // by reason
	First  time.Time         // capture time of the first frame; zero before any
	Last   time.Time
	// Exhausted is true once a finite source (a file) has delivered all it
	// will ever deliver, whether it reached the end or stopped early.
	Exhausted bool
	// StoppedEarly says why a source ended before its natural end; empty
	// when it ended normally or still runs.
	StoppedEarly string
	// Losses are the drops over time, oldest first (losses.go).
	Losses []Loss
	// OpenSince is when a live source's running attempt opened its device
	// (the socket bound, the adapter's channel open); zero while none is
	// open, before the first open and between attempts.
	OpenSince time.Time
}

// Counters is the mutable side of Stats that drivers embed. It is safe for
// concurrent use; Snapshot returns copies so readers never see a half update.
type Counters struct {
	mu     sync.Mutex
	s      Stats
	losses lossLog
}

// Frame counts one delivered frame of n bytes captured at t.
func (c *Counters) Frame(t time.Time, n int) {
	c.mu.Lock()
	c.s.Frames++
	c.s.Bytes += uint64(n)
	if c.s.First.IsZero() || t.Before(c.s.First) {
		c.s.First = t
	}
	if t.After(c.s.Last) {
		c.s.Last = t
	}
	c.mu.Unlock()
}

// Frames counts n delivered frames of bytes in all, captured between
// first and last: one lock for a whole batch.
func (c *Counters) Frames(n, bytes int, first, last time.Time) {
	c.mu.Lock()
	c.s.Frames += uint64(n)
	c.s.Bytes += uint64(bytes)
	if c.s.First.IsZero() || first.Before(c.s.First) {
		c.s.First = first
	}
	if last.After(c.s.Last) {
		c.s.Last = last
	}
	c.mu.Unlock()
}

// Drop counts n frames lost for cause.
func (c *Counters) Drop(cause string, n uint64) {
	c.mu.Lock()
	if c.s.Drops == nil {
		c.s.Drops = make(map[string]uint64)
	}
	c.s.Drops[cause] += n
	c.losses.add(c.clock(), cause, n)
	c.mu.Unlock()
}

// clock is the port's capture clock for a loss: the time of the last
// frame delivered, or the wall clock before any; the caller holds mu.
func (c *Counters) clock() time.Time {
	if c.s.Last.IsZero() {
		return time.Now()
	}
	return c.s.Last
}

// SetDrop sets a drop counter the kernel keeps cumulatively.
func (c *Counters) SetDrop(cause string, n uint64) {
	c.mu.Lock()
	if c.s.Drops == nil {
		c.s.Drops = make(map[string]uint64)
	}
	c.s.Drops[cause] = n
	if c.losses.kernel == nil {
		c.losses.kernel = map[string]uint64{}
	}
	if prev := c.losses.kernel[cause]; n > prev {
		c.losses.add(c.clock(), cause, n-prev)
	}
	c.losses.kernel[cause] = n
	c.mu.Unlock()
}

// Error counts one error for reason.
func (c *Counters) Error(reason string) {
	c.mu.Lock()
	if c.s.Errors == nil {
		c.s.Errors = make(map[string]uint64)
	}
	c.s.Errors[reason]++
	c.mu.Unlock()
}

// Exhaust marks a finite source as done; why is empty for a normal end.
func (c *Counters) Exhaust(why string) {
	c.mu.Lock()
	c.s.Exhausted = true
	c.s.StoppedEarly = why
	c.mu.Unlock()
}

// Ended marks a finite source done by what reading it returned (err) and
// returns what its Run returns: nil is the whole source read; a read
// cancelled by its context is a stop, not an end, so the source is not
// marked and Run returns nil; another error is why it stopped early.
func (c *Counters) Ended(err error) error {
	switch {
	case errors.Is(err, context.Canceled):
		return nil
	case err != nil:
		c.Exhaust(err.Error())
	default:
		c.Exhaust("")
	}
	return err
}

// Opened marks the device open from at, until Closed.
func (c *Counters) Opened(at time.Time) {
	c.mu.Lock()
	c.s.OpenSince = at
	c.mu.Unlock()
}

// Closed marks the device closed: the attempt ended.
func (c *Counters) Closed() {
	c.mu.Lock()
	c.s.OpenSince = time.Time{}
	c.mu.Unlock()
}

// Snapshot returns a consistent copy of the counters.
func (c *Counters) Snapshot() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.s
	s.Drops = maps.Clone(c.s.Drops)
	s.Errors = maps.Clone(c.s.Errors)
	s.Losses = slices.Clone(c.losses.entries)
	return s
}
