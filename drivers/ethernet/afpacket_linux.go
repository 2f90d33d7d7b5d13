//go:build linux

package ethernet

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gopacket/gopacket/afpacket"
	"github.com/gopacket/gopacket/layers"

	"fieldtap/drivers/capture"
)

// Run is one attempt: open the interface and capture until ctx ends or a
// read fails (the daemon's supervisor opens a new socket after a
// failure). The kernel statistics are read a last time before the socket
// closes and carried over to the next socket's, so the drops shown never
// go backwards.
func (s *Source) Run(ctx context.Context, out *capture.Handoff) error {
	tp, err := s.open()
	if err != nil {
		s.counters.Error("open")
		return err
	}
	defer s.closeSocket(tp)
	err = s.read(ctx, tp, out)
	if ctx.Err() != nil {
		return nil
	}
	s.counters.Error("read")
	return fmt.Errorf("ethernet: read %s: %w", s.opts.Device, err)
}

// open creates the TPACKET_V3 socket, attaches the filter, and turns on
// promiscuous mode (dropped by the kernel when the socket closes).
func (s *Source) open() (*afpacket.TPacket, error) {
	o := s.opts
	tp, err := afpacket.NewTPacket(
		afpacket.OptInterface(o.Device),
		afpacket.TPacketVersion3,
		afpacket.OptFrameSize(frameSize),
		afpacket.OptBlockSize(o.BlockSize),
		afpacket.OptNumBlocks(o.NumBlocks),
		afpacket.OptBlockTimeout(o.BlockTimeout),
		afpacket.OptPollTimeout(o.PollTimeout),
		afpacket.OptAddVLANHeader(true), // keep the 802.1Q tag the NIC stripped: VLANs are part of a SPAN capture
	)
	if err != nil {
		return nil, fmt.Errorf("ethernet: open %s: %w", o.Device, err)
	}
	if len(s.filter) > 0 {
		if err := tp.SetBPF(s.filter); err != nil {
			tp.Close()
			return nil, fmt.Errorf("ethernet: attach filter on %s: %w", o.Device, err)
		}
	}
	if err := tp.SetPromiscuous(true); err != nil {
		tp.Close()
		return nil, fmt.Errorf("ethernet: promiscuous %s: %w", o.Device, err)
	}
	// Make both causes visible in capture_status before the first loss;
	// this socket's counts start at zero on top of the earlier sockets'.
	s.publishKernel(kernelStats{})
	return tp, nil
}

func (s *Source) read(ctx context.Context, tp *afpacket.TPacket, out *capture.Handoff) error {
	next := time.Now().Add(statsInterval)
	for ctx.Err() == nil {
		data, ci, err := tp.ZeroCopyReadPacketData()
		switch {
		case err == nil:
			// The ring slot is reused by the next read: a Frame owns a copy.
			out.Offer(capture.Frame{Time: ci.Timestamp, Link: layers.LinkTypeEthernet, Data: append([]byte(nil), data...), OrigLen: ci.Length})
		case errors.Is(err, afpacket.ErrTimeout):
		default:
			return err
		}
		if now := time.Now(); now.After(next) || err != nil {
			s.readKernelStats(tp)
			next = now.Add(statsInterval)
		}
	}
	return nil
}

// readKernelStats publishes PACKET_STATISTICS. afpacket sums the kernel's
// clear-on-read counters, so the values read are this socket's totals.
func (s *Source) readKernelStats(tp *afpacket.TPacket) {
	_, v3, err := tp.SocketStats()
	if err != nil {
		s.counters.Error("kernel_stats")
		return
	}
	s.publishKernel(kernelStats{drops: uint64(v3.Drops()), freezes: uint64(v3.QueueFreezes())})
}

// closeSocket reads the statistics a last time, folds them into the
// totals of closed sockets and closes tp.
func (s *Source) closeSocket(tp *afpacket.TPacket) {
	s.readKernelStats(tp)
	s.kmu.Lock()
	s.closed.drops += s.cur.drops
	s.closed.freezes += s.cur.freezes
	s.cur = kernelStats{}
	s.kmu.Unlock()
	tp.Close()
}

// publishKernel sets the open socket's counts and shows them added to the
// closed sockets'.
func (s *Source) publishKernel(cur kernelStats) {
	s.kmu.Lock()
	s.cur = cur
	total := kernelStats{drops: s.closed.drops + cur.drops, freezes: s.closed.freezes + cur.freezes}
	s.kmu.Unlock()
	s.counters.SetDrop(capture.DropKernel, total.drops)
	s.counters.SetDrop(DropKernelFreeze, total.freezes)
}
