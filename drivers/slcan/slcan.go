package slcan

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"fieldtap/drivers/capture"
	"fieldtap/drivers/devwatch"
)

// DropBeforeOpen counts frame lines the adapter sent before our L took
// effect (left over from an earlier session); they are not captured.
const DropBeforeOpen = "before_open"

// Source captures one slcan adapter. It is a live source: a full hand-off
// drops and counts; a failed session is counted, and the daemon's
// supervisor starts the next one.
type Source struct {
	opts     Options
	bitrateC string // "S5", from opts.Bitrate
	counters capture.Counters

	mu     sync.Mutex
	status Status
	cur    *session // the open session writers use; nil while closed

	// wmu is the write lock: one transmit or mode change in flight, so
	// the next ack or BELL answers it.
	wmu sync.Mutex
	tap atomic.Pointer[TapFunc]
	// node is the device number of the tty the session opened; 0 while
	// none is open (or the path names no device node).
	node atomic.Uint64
}

var _ capture.Source = (*Source)(nil)

// Status is what the adapter was asked and answered in the last session.
type Status struct {
	Open       bool              // the channel is open and frames are read
	ListenOnly bool              // open with L; false only while SetMode(Normal) holds
	Bitrate    int               // the bitrate sent with S
	Replies    map[string]string // command ("C", "S5", "L") → "ack", "bell" or "none"
	Sessions   int               // sessions started; more than 1 means restarts
	LastError  string            // why the last session ended, if it failed
	Sent       uint64            // frames the adapter accepted for transmit, this process
	Refused    uint64            // transmits the adapter answered with BELL
}

// New checks o once and returns a source; the port opens when Run starts.
func New(o Options) (*Source, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	cmd, _ := BitrateCommand(o.Bitrate) // checked above
	return &Source{opts: o, bitrateC: cmd}, nil
}

func (s *Source) Name() string         { return s.opts.Name }
func (s *Source) Kind() capture.Kind   { return capture.KindCAN }
func (s *Source) Origin() string       { return "slcan:" + s.opts.Device }
func (s *Source) Live() bool           { return true }
func (s *Source) Stats() capture.Stats { return s.counters.Snapshot() }

// Causes names what Stats may count (capture.Causer): line errors, the
// adapter's refusals and the write side's outcomes.
func (s *Source) Causes() (drops, errors []string) {
	return []string{DropBeforeOpen}, []string{ReasonBell, ReasonUnknown, ReasonShort, ReasonBadHex, ReasonDLC, ReasonLength,
		ReasonIDRange, ReasonTimestamp, ReasonOverlong, ReasonReorder, ReasonNotListen, ReasonBitrate, ReasonOpen, ReasonRead,
		ReasonTxRefused, ReasonTxNoAck, ReasonTxWrite, ReasonTxLateAck, ReasonTxLateRefused}
}

var _ capture.Causer = (*Source)(nil)

// Probe stats the device path: gone when nothing is there (the adapter
// was unplugged and its node removed) or another tty is (plugged in
// again, its by-id link now pointing elsewhere).
func (s *Source) Probe() capture.Medium { return devwatch.NodeMedium(s.opts.Device, s.node.Load()) }

var _ capture.Prober = (*Source)(nil)

// Status returns a copy of the session status.
func (s *Source) Status() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.status
	st.Replies = make(map[string]string, len(s.status.Replies))
	for k, v := range s.status.Replies {
		st.Replies[k] = v
	}
	return st
}

// Run is one session: open the adapter and capture until ctx ends or the
// session fails. It returns nil when ctx ends and the session's error
// otherwise, also kept in Status.LastError.
func (s *Source) Run(ctx context.Context, out *capture.Handoff) error {
	err := s.run1(ctx, out)
	if ctx.Err() != nil {
		return nil
	}
	s.update(func(st *Status) { st.Open = false; st.LastError = fmt.Sprint(err) })
	return err
}

func (s *Source) update(f func(*Status)) {
	s.mu.Lock()
	f(&s.status)
	s.mu.Unlock()
}
