package socketcan

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"fieldtap/drivers/capture"
	"fieldtap/drivers/devwatch"
	"fieldtap/drivers/wire"
)

// Error reasons in Stats().Errors besides the err_… error-frame classes.
const (
	ReasonConfigure = "configure"  // bitrate, mode or link state could not be set
	ReasonOpen      = "open"       // the raw socket could not be opened
	ReasonRead      = "read"       // a read failed
	ReasonShortRead = "short_read" // a read that was not one can_frame or canfd_frame
	ReasonLength    = "length_over_8"
	ReasonFDLength  = "length_over_64" // a canfd_frame whose len byte is over 64
)

// ErrNotLinux is returned by Run on systems without SocketCAN; it wraps
// capture.ErrUnsupported, so the supervisor does not retry it.
var ErrNotLinux = fmt.Errorf("socketcan: SocketCAN needs Linux: %w", capture.ErrUnsupported)

// Source captures one SocketCAN interface. It is a live source: a full
// hand-off drops and counts; a failed session is counted, and the
// daemon's supervisor starts the next one.
type Source struct {
	opts     Options
	counters capture.Counters

	mu     sync.Mutex
	status Status
	wanted Mode // the mode sessions configure; SetMode changes it (guarded by mu)

	linkMu sync.Mutex   // one configure at a time: run1's and SetMode's
	downs  atomic.Int32 // link bounces announced by SetMode, not yet seen by the reader

	txMu sync.Mutex // guards txState
	txState

	linkFn func() (link, error) // nil: openLink; a fake in tests
	tap    atomic.Pointer[TapFunc]
	// bound is the index of the interface the capture socket is bound
	// to; 0 while none is open.
	bound atomic.Int32
}

var _ capture.Source = (*Source)(nil)

// Status is the link as configured and the bus as error frames report it.
type Status struct {
	LinkKind    string   // "can", "vcan", "vxcan"; "" before the first configure
	Bitrate     int      // read back from the link; 0 on virtual links
	ListenOnly  bool     // read back from the link
	Open        bool     // frames are being read
	State       BusState // from the latest error frame that reports one
	BusOffs     uint64   // error frames with CAN_ERR_BUSOFF
	Restarts    uint64   // error frames with CAN_ERR_RESTARTED
	ErrorFrames uint64
	TxErr       int // controller error counters from the latest CAN_ERR_CNT frame; -1 unknown
	RxErr       int
	Sent        uint64 // frames WriteFrame handed to the kernel
	Sessions    int    // sessions started; more than 1 means reopens
	LastError   string // why the last session ended, if it failed
}

// New checks o once and returns a source; the link is configured and the
// socket opened when Run starts.
func New(o Options) (*Source, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	return &Source{opts: o, wanted: o.Mode, status: Status{TxErr: -1, RxErr: -1}}, nil
}

func (s *Source) Name() string         { return s.opts.Name }
func (s *Source) Kind() capture.Kind   { return capture.KindCAN }
func (s *Source) Origin() string       { return "socketcan:" + s.opts.Interface }
func (s *Source) Live() bool           { return true }
func (s *Source) Stats() capture.Stats { return s.counters.Snapshot() }

// Causes names what Stats may count (capture.Causer): the driver's own
// reasons and every error-frame class and detail it classifies.
func (s *Source) Causes() (drops, errors []string) {
	errors = []string{ReasonConfigure, ReasonOpen, ReasonRead, ReasonShortRead, ReasonLength, ReasonFDLength, ReasonTxWrite, ReasonModeBounce,
		ReasonMalformedError, "err_unclassified"}
	for _, c := range classReasons {
		errors = append(errors, c.reason)
	}
	for _, r := range append(ctrlReasons[:], protReasons[:]...) {
		if r != "" {
			errors = append(errors, r)
		}
	}
	return []string{capture.DropKernel}, errors
}

var _ capture.Causer = (*Source)(nil)

// Probe looks the interface up by name: gone when it is missing or is
// not the one the capture socket is bound to (a USB CAN adapter plugged
// in again), down when it is not set up or has no carrier (a controller
// that went bus-off).
func (s *Source) Probe() capture.Medium {
	return devwatch.InterfaceMedium(s.opts.Interface, int(s.bound.Load()))
}

var _ capture.Prober = (*Source)(nil)

// Status returns a copy of the link and bus status.
func (s *Source) Status() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.status
}

// Run is one session: configure the link and capture until ctx ends or
// the session fails. It returns nil when ctx ends, ErrNotLinux off Linux
// and the session's error otherwise, also kept in Status.LastError.
func (s *Source) Run(ctx context.Context, out *capture.Handoff) error {
	s.update(func(st *Status) { st.Sessions++ })
	err := s.run1(ctx, out)
	if ctx.Err() != nil {
		// Capture is over for good: the transmit socket goes with it.
		s.closeTx()
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

// reader does the per-frame work shared by every platform: decode, count
// error frames, hand on. It is not safe for concurrent use.
type reader struct {
	s       *Source
	out     *capture.Handoff
	reasons []string // reused by classifyError
}

// frame handles one read of n bytes received at t.
func (r *reader) frame(b []byte, t time.Time) {
	id, flags, data, err := decodeRaw(b)
	switch {
	case errors.Is(err, errShortRead):
		r.s.counters.Error(ReasonShortRead)
		return
	case errors.Is(err, errFDLength):
		r.s.counters.Error(ReasonFDLength)
		return
	case err != nil:
		r.s.counters.Error(ReasonLength)
		return
	}
	if id&wire.CANERR != 0 {
		r.errorFrame(id, data)
	}
	if flags != 0 {
		id &^= wire.CANRTR // CAN FD has no remote frames: the bit means nothing
	}
	enc, err := wire.AppendCANFrame(make([]byte, 0, wire.CANFrameBytes-wire.MaxCANData+len(data)), id, flags, data)
	if err != nil { // cannot happen: decodeRaw bounds the length
		r.s.counters.Error(ReasonFDLength)
		return
	}
	r.out.Offer(capture.Frame{Time: t, Link: wire.LinkCANSocketCAN, Data: enc})
	// The tap serves the transmit path, which speaks classic CAN only.
	if tap := r.s.tap.Load(); tap != nil && id&wire.CANERR == 0 && flags == 0 {
		(*tap)(t, id, data)
	}
}

func (r *reader) errorFrame(id uint32, data []byte) {
	e := classifyError(r.reasons, id, data)
	r.reasons = e.Reasons
	for _, reason := range e.Reasons {
		r.s.counters.Error(reason)
	}
	r.s.update(func(st *Status) {
		st.ErrorFrames++
		if e.State != StateUnknown {
			st.State = e.State
		}
		if e.BusOff {
			st.BusOffs++
		}
		if e.Restart {
			st.Restarts++
		}
		if e.TxErr >= 0 {
			st.TxErr, st.RxErr = e.TxErr, e.RxErr
		}
	})
}
