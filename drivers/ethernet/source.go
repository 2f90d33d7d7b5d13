package ethernet

import (
	"sync"

	"golang.org/x/net/bpf"

	"fieldtap/drivers/capture"
)

// Source captures one Ethernet interface. It is a live source: a full
// hand-off drops and counts, it never blocks the kernel ring.
type Source struct {
	opts     Options
	filter   []bpf.RawInstruction
	counters capture.Counters

	kmu    sync.Mutex
	closed kernelStats // summed over the sockets already closed
	cur    kernelStats // the open socket's
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

// Stats returns the port's kernel drops, ring freezes and errors.
func (s *Source) Stats() capture.Stats { return s.counters.Snapshot() }
