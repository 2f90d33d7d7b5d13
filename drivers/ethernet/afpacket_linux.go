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

// Run opens the interface and captures until ctx ends. The kernel
// statistics are read a last time before the socket closes.
func (s *Source) Run(ctx context.Context, out *capture.Handoff) error {
	tp, err := s.open()
	if err != nil {
		s.counters.Error("open")
		return err
	}
	defer tp.Close()
	defer s.readKernelStats(tp)
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
	// Start the kernel counters at zero for this capture, and make both
	// causes visible in capture_status before the first loss.
	s.counters.SetDrop(capture.DropKernel, 0)
	s.counters.SetDrop(DropKernelFreeze, 0)
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
// clear-on-read counters, so the values set are cumulative.
func (s *Source) readKernelStats(tp *afpacket.TPacket) {
	_, v3, err := tp.SocketStats()
	if err != nil {
		s.counters.Error("kernel_stats")
		return
	}
	s.counters.SetDrop(capture.DropKernel, uint64(v3.Drops()))
	s.counters.SetDrop(DropKernelFreeze, uint64(v3.QueueFreezes()))
}
