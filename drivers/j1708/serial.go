package j1708

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"go.bug.st/serial"

	"fieldtap/drivers/capture"
	"fieldtap/drivers/devwatch"
	"fieldtap/drivers/wire"
)

// Source captures J1708 from a serial port at 8N1, framing messages on idle
// gaps and checksums. It is a live source: a full hand-off drops and
// counts, and a failed read ends the attempt for the supervisor to retry.
type Source struct {
	opts     Options
	counters capture.Counters

	mu     sync.Mutex
	framer FramerStats // published after each read
	line   *line       // the open port, shared with WriteFrame; nil when closed
	tx     TxStatus

	wmu      sync.Mutex  // one WriteFrame at a time
	transmit atomic.Bool // WriteFrame allowed; false after every open
	// node is the device number of the tty the attempt opened; 0 while
	// none is open (or the path names no device node).
	node atomic.Uint64
}

var _ capture.Source = (*Source)(nil)

// New checks o once and returns a source; the port opens when Run starts.
func New(o Options) (*Source, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	return &Source{opts: o}, nil
}

func (s *Source) Name() string       { return s.opts.Name }
func (s *Source) Kind() capture.Kind { return capture.KindJ1708 }
func (s *Source) Origin() string     { return "serial:" + s.opts.Device }
func (s *Source) Live() bool         { return true }

// Probe stats the device path: gone when nothing is there (the adapter
// was unplugged and its node removed) or another tty is (plugged in
// again, its by-id link now pointing elsewhere). A serial line has no
// carrier to tell a quiet bus from a cut wire: never down.
func (s *Source) Probe() capture.Medium { return devwatch.NodeMedium(s.opts.Device, s.node.Load()) }

var _ capture.Prober = (*Source)(nil)

// Framer error reasons in Stats.Errors.
const (
	ErrReasonChecksum = "checksum"       // FramerStats.ChecksumFailures
	ErrReasonNoise    = "noise"          // FramerStats.Noise
	ErrReasonOverlong = "overlong_run"   // FramerStats.Overlong
	ErrReasonResync   = "resync"         // FramerStats.Resyncs (recovered, not lost)
	ErrReasonDiscard  = "discarded_byte" // FramerStats.Discarded
)

// Stats returns the port counters with the framer's counts as errors.
func (s *Source) Stats() capture.Stats {
	st := s.counters.Snapshot()
	f := s.FramerStats()
	if st.Errors == nil {
		st.Errors = map[string]uint64{}
	}
	for k, v := range map[string]uint64{ErrReasonChecksum: f.ChecksumFailures, ErrReasonNoise: f.Noise,
		ErrReasonOverlong: f.Overlong, ErrReasonResync: f.Resyncs, ErrReasonDiscard: f.Discarded} {
		if v > 0 {
			st.Errors[k] = v
		}
	}
	return st
}

// Causes names what Stats may count (capture.Causer): the framer's
// counts, the line's failures and the write side's outcomes. The framer
// loses no frame to a drop: what it cannot frame is an error.
func (s *Source) Causes() (drops, errors []string) {
	return nil, []string{ErrReasonChecksum, ErrReasonNoise, ErrReasonOverlong, ErrReasonResync, ErrReasonDiscard, "open", "read",
		ReasonTxCollision, ReasonTxNoEcho, ReasonTxBusy, ReasonTxWrite}
}

var _ capture.Causer = (*Source)(nil)

// FramerStats returns the framer's counters.
func (s *Source) FramerStats() FramerStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.framer
}

// Run is one attempt: open the port and capture until ctx ends or a read
// fails (an unplugged adapter); the daemon's supervisor opens it again.
// Closing the port unblocks a pending read.
func (s *Source) Run(ctx context.Context, out *capture.Handoff) error {
	p, err := serial.Open(s.opts.Device, &serial.Mode{BaudRate: s.opts.Baud, DataBits: 8, Parity: serial.NoParity, StopBits: serial.OneStopBit})
	if err != nil {
		s.counters.Error("open")
		return fmt.Errorf("j1708: open %s: %w", s.opts.Device, err)
	}
	stop := context.AfterFunc(ctx, func() { p.Close() })
	defer stop()
	defer p.Close()
	node, _ := devwatch.Node(s.opts.Device) // 0 when unknown: Probe then looks at presence only
	s.node.Store(node)
	s.counters.Opened(time.Now())
	defer func() {
		s.node.Store(0)
		s.counters.Closed()
	}()
	ln := newLine(p, time.Now())
	s.setLine(ln)
	defer s.setLine(nil)
	err = s.read(ctx, p, ln, out)
	if ctx.Err() != nil {
		return nil
	}
	s.counters.Error("read")
	return fmt.Errorf("j1708: read %s: %w", s.opts.Device, err)
}

// reader is the part of serial.Port the capture loop uses.
type reader interface {
	Read(p []byte) (int, error)
	SetReadTimeout(t time.Duration) error
}

// read is the capture loop; ln, when not nil, hears every chunk so the
// write side can time bus access and read back its own bytes.
func (s *Source) read(ctx context.Context, p reader, ln *line, out *capture.Handoff) error {
	f := NewFramer(s.opts.Gap, s.opts.byteTime())
	emit := func(msg []byte, at time.Time) {
		// The framer lends msg; a Frame owns its bytes.
		out.Offer(capture.Frame{Time: at, Link: wire.LinkJ1708, Data: append([]byte(nil), msg...)})
	}
	buf := make([]byte, readBuffer)
	timeout := time.Duration(-1)
	for ctx.Err() == nil {
		// Wait long while idle; while a message may be in progress, only
		// as long as the gap, so the framer hears the silence that ends it.
		want := s.opts.IdlePoll
		if f.Buffered() > 0 {
			want = s.opts.Gap
		}
		if want != timeout {
			if err := p.SetReadTimeout(want); err != nil {
				return err
			}
			timeout = want
		}
		n, err := p.Read(buf)
		now := time.Now()
		if err != nil {
			f.Flush(emit)
			s.publish(f)
			var pe *serial.PortError
			if errors.As(err, &pe) && pe.Code() == serial.PortClosed && ctx.Err() != nil {
				return nil
			}
			return err
		}
		if n == 0 {
			f.Idle(now, emit)
		} else {
			if ln != nil {
				ln.received(buf[:n], now)
			}
			f.Feed(buf[:n], now, emit)
		}
		s.publish(f)
	}
	f.Flush(emit)
	s.publish(f)
	return nil
}

func (s *Source) publish(f *Framer) {
	s.mu.Lock()
	s.framer = f.Stats
	s.mu.Unlock()
}
