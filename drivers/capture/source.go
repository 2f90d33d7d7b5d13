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

// Medium is what a live source sees of its device from outside the
// capture: whether it is there, the same one its attempt opened, and
// whether its link carries anything.
type Medium string

// Media. A source that cannot tell says MediumUnknown.
const (
	MediumUnknown Medium = ""
	// MediumUp: the device is there and its link is up with a carrier
	// (a tty: its node is there).
	MediumUp Medium = "up"
	// MediumDown: the device is there but its link is down or has no
	// carrier (a SPAN cable pulled at the switch, a CAN controller
	// bus-off, an interface set down).
	MediumDown Medium = "down"
	// MediumGone: nothing of that name is there, or another device is:
	// an interface that came back with a new index, a tty node made
	// again for another adapter. An attempt that opened the old one
	// captures nothing more.
	MediumGone Medium = "gone"
)

// Prober is a live source that can look at its device from outside Run,
// cheaply enough to be asked every second: an ioctl or a stat, never a
// read of the capture.
type Prober interface {
	// Probe reports the device as it is now. While an attempt has the
	// device open, a device of the same name that is not the one opened
	// is MediumGone; between attempts only presence and link count.
	Probe() Medium
}

// Causer is implemented by sources that can name every drop cause and
// error reason their Stats may count, so the box exports each at 0 from
// start and an alert rule has a series to read before the first loss.
// The hand-off's DropHandoffFull is every port's; a source names its own.
type Causer interface {
	Causes() (drops, errors []string)
}
