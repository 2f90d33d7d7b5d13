package ethernet

import (
	"sync/atomic"
	"unsafe"

	"golang.org/x/net/bpf"

	"fieldtap/drivers/capture"
	"fieldtap/drivers/devwatch"
)

// Source captures one Ethernet interface. It is a live source: a full
// hand-off drops and counts, it never blocks the kernel ring.
type Source struct {
	opts     Options
	filter   []bpf.RawInstruction
	counters capture.Counters

	closed kernelStats // summed over the sockets already closed (Run's goroutine only)
	// bound is the index of the interface the open socket is bound to;
	// 0 while none is open.
	bound atomic.Int32
}

// kernelStats are the PACKET_STATISTICS counts of one socket, or a sum.
type kernelStats struct{ drops, freezes uint64 }

var _ capture.Source = (*Source)(nil)

// New checks o once (the filter included) and returns a source; the
// socket opens when Run starts.
func New(o Options) (*Source, error) {
	prog, err := o.check()
	if err != nil {
		return nil, err
	}
	return &Source{opts: o, filter: prog}, nil
}

func (s *Source) Name() string       { return s.opts.Name }
func (s *Source) Kind() capture.Kind { return capture.KindEthernet }
func (s *Source) Origin() string     { return "afpacket:" + s.opts.Device }
func (s *Source) Live() bool         { return true }

// Footprint is the ring in kernel memory and, in the heap, the frame
// lists and VLAN rewrite buffers of the blocks the analysers may hold.
func (s *Source) Footprint() capture.Footprint {
	perBlock := s.opts.BlockSize / minSlot
	frames := perBlock * int(unsafe.Sizeof(capture.Frame{}))
	vlan := s.opts.BlockSize + 4*perBlock
	return capture.Footprint{
		Kernel: int64(s.opts.BlockSize) * int64(s.opts.NumBlocks),
		Heap:   int64(maxInflightBlocks) * int64(frames+vlan),
	}
}

var _ capture.Sizer = (*Source)(nil)

// Stats returns the port's kernel drops, ring freezes and errors.
func (s *Source) Stats() capture.Stats { return s.counters.Snapshot() }

// Causes names what Stats may count (capture.Causer).
func (s *Source) Causes() (drops, errors []string) {
	return []string{capture.DropKernel, DropKernelFreeze}, []string{"open", "read", ReasonLinkDown, "ring_offset", "kernel_stats"}
}

var _ capture.Causer = (*Source)(nil)

// Probe looks the interface up by name: gone when it is missing or is
// not the one the open socket is bound to (a USB NIC plugged in again
// gets a new index, and the kernel unbound the old socket), down when it
// is not set up or has no carrier (the SPAN cable pulled at the switch).
func (s *Source) Probe() capture.Medium {
	return devwatch.InterfaceMedium(s.opts.Device, int(s.bound.Load()))
}

var _ capture.Prober = (*Source)(nil)
