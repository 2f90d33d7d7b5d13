package ethernet

import (
	"errors"
	"fmt"
	"time"

	"golang.org/x/net/bpf"
)

// Defaults. The ring is sized for a small board: 32 blocks of 128 KiB is
// 4 MiB of kernel memory, about a third of a second of a saturated
// 100 Mbit/s mirror and minutes of signalling-only traffic.
const (
	DefaultBlockSize = 128 << 10
	DefaultNumBlocks = 32
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
)

// Drop causes this driver adds to capture's.
const (
	// DropKernelFreeze counts ring freezes (tp_freeze_q_cnt): episodes,
	// not frames, in which every block was full. The frames lost during
	// them are in capture.DropKernel.
	DropKernelFreeze = "kernel_queue_freezes"
)

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
	case o.NumBlocks < 1:
		return nil, fmt.Errorf("ethernet %s: %d blocks: want at least 1", o.Name, o.NumBlocks)
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
