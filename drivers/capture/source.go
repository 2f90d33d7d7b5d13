package capture

import (
	"context"
	"errors"
)

// Kind names the medium a port captures.
type Kind string

// Port kinds.
const (
	KindEthernet Kind = "ethernet"
	KindCAN      Kind = "can"
	KindJ1708    Kind = "j1708"
)

// Source is one capture port: a live interface, a serial line, a file, or a
// simulated port.
type Source interface {
	// Name is the port name operators use ("span0", "can0", "file1").
	Name() string
	Kind() Kind
	// Origin says where frames come from ("afpacket:eth0", "file:/x.pcap",
	// "sim:sip").
	Origin() string
	// Live is false for sources that end by themselves (files).
	Live() bool
	// Run is one attempt: it captures until ctx is cancelled, a finite
	// source ends, or a live one fails, handing each frame to out. It
	// returns nil on cancellation or a normal end and an error naming what
	// failed otherwise; either way Stats stays readable. A live source
	// keeps no restart loop of its own: the daemon's supervisor calls Run
	// again, with backoff, after it returns (an error wrapping
	// ErrUnsupported is not retried).
	Run(ctx context.Context, out *Handoff) error
	// Stats returns the port's counters, including the hand-off's drops.
	Stats() Stats
}

// ErrUnsupported is wrapped by a Run error that no retry can fix: the
// facility does not exist on this system (AF_PACKET or SocketCAN off
// Linux).
var ErrUnsupported = errors.New("not supported on this system")

// Footprint is the memory a source holds for frames in flight, for the
// memory budget.
type Footprint struct {
	// Heap is Go heap the source owns for frames it hands off (read
	// buffers and their frame lists); its frames borrow it.
	Heap int64
	// Kernel is kernel memory mapped into the process (an AF_PACKET
	// ring): it counts in RSS, not in the Go heap.
	Kernel int64
	// PerFrame is, for a source that allocates each frame's data on its
	// own, the largest frame it emits: the hand-off may hold its depth of
	// them. 0 when frames borrow Heap or Kernel.
	PerFrame int
}

// Sizer is implemented by sources that know their Footprint. For one that
// does not, the daemon assumes frames allocated one by one, each as large
// as its kind allows.
type Sizer interface {
	Footprint() Footprint
}
