package ethernet

import (
	"errors"
	"fmt"
	"time"

	"golang.org/x/net/bpf"
)

// Defaults. The ring is the buffer a busy machine's scheduling delays
// are absorbed in: 64 blocks of 256 KiB is 16 MiB of kernel memory
// (taken from the memory budget), about 60 000 RTP-sized frames, which is
// 300 ms at 200 000 frames/s, 1.3 s of a saturated 100 Mbit/s mirror.
// A 256 KiB block fills in about 5 ms at that rate: the hand-off runs
// once per block, not per frame.
const (
	DefaultBlockSize = 256 << 10
	DefaultNumBlocks = 64
	// DefaultBlockTimeout is how long the kernel holds a part-filled block
	// before handing it over: it bounds the delay before a frame on a
	// quiet port becomes visible to tools.
	DefaultBlockTimeout = 20 * time.Millisecond
	// DefaultPollTimeout bounds one wait for a block, so cancellation and
	// the kernel statistics are looked at even on a silent port.
	DefaultPollTimeout = 100 * time.Millisecond
	// frameSize is tp_frame_size. TPACKET_V3 packs frames of any length
	// into a block, so it only has to divide the block size.
	frameSize = 4096
	// pageSize is the smallest unit the kernel maps a ring block in.
	pageSize = 4096
	// statsInterval is how often PACKET_STATISTICS are read while frames
	// flow. Each read also clears the kernel's counters; the driver sums.
	statsInterval = time.Second
	// maxInflightBlocks bounds the blocks handed to the analysers and not
	// yet released. The kernel fills the other blocks meanwhile, so a
	// slow analyser's backlog waits in the ring, and the Go heap holds
	// only this many blocks' frame lists.
	maxInflightBlocks = 4
	// minSlot is the least room a frame takes in a block: a tpacket3_hdr
	// and a 14-byte Ethernet header, 16-byte aligned (TPACKET_ALIGNMENT).
	minSlot = 64
)

// Drop causes this driver adds to capture's.
const (
	// DropKernelFreeze counts ring freezes (tp_freeze_q_cnt): episodes,
	// not frames, in which every block was full. The frames lost during
	// them are in capture.DropKernel.
	DropKernelFreeze = "kernel_queue_freezes"
)

// ReasonLinkDown counts the interface set down under an open socket: the
// kernel reports it once on the socket and hooks the socket in again
// when the link comes back, so capture goes on; frames on the wire
// meanwhile were not seen.
const ReasonLinkDown = "link_down"

// Options configure one capture port; zero fields take the defaults.
type Options struct {
	Name   string // port name operators use ("span0")
	Device string // network interface ("eth1")
	// Filter is a BPF program as `tcpdump -dd` or `tcpdump -ddd` prints
	// it; empty captures everything.
	Filter       string
	BlockSize    int
	NumBlocks    int
	BlockTimeout time.Duration
	PollTimeout  time.Duration
}

// check fills defaults and validates o once, returning the parsed filter.
func (o *Options) check() ([]bpf.RawInstruction, error) {
	if o.Name == "" {
		return nil, errors.New("ethernet: no port name")
	}
	if o.Device == "" {
		return nil, fmt.Errorf("ethernet %s: no device", o.Name)
	}
	if o.BlockSize == 0 {
		o.BlockSize = DefaultBlockSize
	}
	if o.NumBlocks == 0 {
		o.NumBlocks = DefaultNumBlocks
	}
	if o.BlockTimeout == 0 {
		o.BlockTimeout = DefaultBlockTimeout
	}
	if o.PollTimeout == 0 {
		o.PollTimeout = DefaultPollTimeout
	}
	switch {
	case o.BlockSize < pageSize || o.BlockSize%pageSize != 0:
		return nil, fmt.Errorf("ethernet %s: block size %d must be a positive multiple of %d", o.Name, o.BlockSize, pageSize)
	case o.NumBlocks <= maxInflightBlocks:
		return nil, fmt.Errorf("ethernet %s: %d blocks: want more than the %d the analysers may hold", o.Name, o.NumBlocks, maxInflightBlocks)
	case o.BlockTimeout < time.Millisecond:
		return nil, fmt.Errorf("ethernet %s: block timeout %v: the kernel counts whole milliseconds", o.Name, o.BlockTimeout)
	case o.PollTimeout < time.Millisecond:
		return nil, fmt.Errorf("ethernet %s: poll timeout %v: want at least 1ms", o.Name, o.PollTimeout)
	}
	prog, err := ParseFilter(o.Filter)
	if err != nil {
		return nil, fmt.Errorf("ethernet %s: filter: %w", o.Name, err)
	}
	return prog, nil
}
