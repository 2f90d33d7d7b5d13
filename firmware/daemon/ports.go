package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"fieldtap/drivers/capture"
	"fieldtap/drivers/wire"
	"fieldtap/firmware/config"
	"fieldtap/firmware/supervise"
	"fieldtap/services/budget"
	"fieldtap/services/ports"
	"fieldtap/services/recorder"
)

// portOptions say how a port runs.
type portOptions struct {
	depth     int               // frames in flight in its hand-off (store.handoff_depth)
	supervise supervise.Options // its restarts' pacing
	// silentAfter is how long it may deliver nothing before it is shown
	// silent; config.DefaultSilentAfter when 0.
	silentAfter time.Duration
}

// port is one running capture port: its source and the supervisor that
// restarts it, its hand-off counters, what consumes its frames and the
// store that keeps them, and the watchdog's view of it.
type port struct {
	src      capture.Source
	sup      *supervise.Supervisor
	handoff  *capture.Handoff
	counters capture.Counters // deliveries and hand-off drops
	consume  consumer
	stored   func() budget.Use
	shared   func() []budget.Use
	tunnels  func() map[string]uint64
	// rec records every delivered frame (recording.attach); nil with
	// recWhy when the port is not recorded. trim, when set, says how many
	// bytes of a frame to keep (RTP headers only).
	rec    *recorder.Port
	recWhy string
	trim   func(capture.Frame) int
	// drained is set once the consumer has taken and released every
	// frame the source handed off: only then is a finite port exhausted,
	// so no answer says "whole" while frames still wait in the hand-off.
	drained   atomic.Bool
	drainedAt atomic.Int64 // Unix ns, when drained was set

	// live is the port's state (liveness.go); poked asks its watchdog
	// for a look now.
	live  *liveness
	poked chan struct{}
	// stopAttempt ends the running attempt (nil between attempts), so
	// the watchdog can restart a port whose device went away.
	attemptMu   sync.Mutex
	stopAttempt context.CancelCauseFunc

	// dropCauses and errorReasons name what the port can count, for the
	// series exported at 0 from start (portCauses).
	dropCauses, errorReasons []string
}

func newPort(src capture.Source, an *analysers, o portOptions) (*port, error) {
	sup, err := supervise.New(o.supervise)
	if err != nil {
		return nil, err
	}
	if o.silentAfter == 0 {
		o.silentAfter = config.DefaultSilentAfter
	}
	consume, stored, err := an.attach(src.Name(), src.Kind())
	if err != nil {
		return nil, err
	}
	kind := src.Kind()
	p := &port{src: src, sup: sup, consume: consume, stored: stored, shared: func() []budget.Use { return an.shared(kind) },
		tunnels: func() map[string]uint64 { return an.portTunnels(src.Name()) },
		live:    newLiveness(src.Live(), o.silentAfter, time.Now()), poked: make(chan struct{}, 1)}
	p.dropCauses, p.errorReasons = portCauses(src)
	p.handoff = capture.NewHandoff(o.depth, &p.counters)
	an.handoffsMu.Lock()
	an.handoffs[src.Name()] = p.handoff
	an.handoffsMu.Unlock()
	return p, nil
}

// run starts the source under its supervisor, the consumer that stores
// its frames and, for a live source, its watchdog. A live source that
// fails is started again with backoff, the same hand-off carrying on;
// the goroutines end when ctx does or a finite source is exhausted.
func (p *port) run(ctx context.Context, wg *sync.WaitGroup, log *slog.Logger) {
	wg.Add(2)
	if p.src.Live() {
		wg.Go(func() { p.watch(ctx, log) })
	}
	go func() {
		defer wg.Done()
		defer p.handoff.Close()
		log.Info("port started", "port", p.src.Name(), "kind", p.src.Kind(), "source", p.src.Origin())
		err := p.sup.Run(ctx, p.src.Live(), func(ctx context.Context) error { return p.attempt(ctx, log) })
		switch {
		case err != nil:
			log.Error("port stopped early", "port", p.src.Name(), "err", err)
			p.look(log)
		case !p.src.Live():
			log.Info("port exhausted", "port", p.src.Name())
		}
	}()
	go func() {
		defer wg.Done()
		start := time.Now()
		var frames uint64
		for {
			b, ok := p.handoff.Receive()
			if !ok {
				break
			}
			if bad := p.consume(b.Frames); bad > 0 {
				p.counters.Drop(capture.DropUndecodable, uint64(bad))
			}
			// The recorder encodes what it keeps before the batch's
			// buffers go back to the source; a port without one (every
			// file) skips the loop.
			if p.rec != nil {
				for i := range b.Frames {
					p.record(b.Frames[i])
				}
			}
			frames += uint64(len(b.Frames))
			p.handoff.Release(b)
		}
		p.drainedAt.Store(time.Now().UnixNano())
		p.drained.Store(true)
		if !p.src.Live() {
			// Every frame the file held is in the stores: what a batch
			// run or a benchmark waits for.
			log.Info("port drained", "port", p.src.Name(), "frames", frames, "seconds", time.Since(start).Seconds())
			p.look(log)
		}
	}()
}

// record tees a delivered frame to the port's recorder (the caller
// checks there is one), after the analysers saw it (so the media analyser
// knows whether it is RTP).
func (p *port) record(f capture.Frame) {
	if p.trim != nil {
		if keep := p.trim(f); keep < len(f.Data) {
			p.rec.WriteHeaders(f.Time, uint16(f.Link), f.Data, f.OrigLen, keep)
			return
		}
	}
	p.rec.Write(f.Time, uint16(f.Link), f.Data, f.OrigLen)
}

// linkType is a recorded link type as the stores take it.
func linkType(l uint16) wire.LinkType { return wire.LinkType(l) }

// attempt is one run of the source (run1), which the watchdog may end
// when the device it opened goes away. An error no restart can fix
// stops the supervisor; any other failure of a live port is logged and
// retried. The port is looked at as the attempt starts and when it
// fails, so its state follows at once.
func (p *port) attempt(ctx context.Context, log *slog.Logger) error {
	actx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	p.attemptMu.Lock()
	p.stopAttempt = stop
	p.attemptMu.Unlock()
	p.look(log)
	err := p.src.Run(actx, p.handoff)
	p.attemptMu.Lock()
	p.stopAttempt = nil
	p.attemptMu.Unlock()
	if ctx.Err() == nil && actx.Err() != nil {
		err = context.Cause(actx) // the watchdog ended it
	}
	if errors.Is(err, capture.ErrUnsupported) {
		return fmt.Errorf("%w (%w)", err, supervise.ErrPermanent)
	}
	if ctx.Err() == nil && p.src.Live() {
		p.live.fail(p.arrivals()) // the attempt delivers nothing more
		log.Warn("port failed; restarting", "port", p.src.Name(), "err", err, "restarts", p.sup.Status().Restarts)
		p.look(log)
	}
	return err
}

func (p *port) status() ports.Status {
	s := p.src.Stats()
	h := p.counters.Snapshot()
	sup := p.sup.Status()
	drops := map[string]uint64{}
	for k, v := range s.Drops {
		drops[k] += v
	}
	for k, v := range h.Drops {
		drops[k] += v
	}
	var rec *recorder.PortStatus
	if p.rec != nil {
		st := p.rec.Status()
		rec = &st
	}
	stopped := s.StoppedEarly
	if stopped == "" {
		stopped = sup.Stopped
	}
	state, since := p.live.current()
	return ports.Status{
		Recorder:       rec,
		RecorderReason: p.recWhy,
		Name:           p.src.Name(),
		Kind:           string(p.src.Kind()),
		Source:         p.src.Origin(),
		Live:           p.src.Live(),
		Frames:         h.Frames,
		Bytes:          h.Bytes,
		Drops:          drops,
		Errors:         s.Errors,
		FirstTime:      timePtr(h.First),
		LastTime:       timePtr(h.Last),
		// A finite source is exhausted once it delivered all it will and
		// the analysers consumed all of it (DESIGN.md §4).
		SourceExhausted: s.Exhausted && p.drained.Load(),
		StoppedEarly:    stopped,
		Losses:          losses(s.Losses, h.Losses),
		DropCauses:      p.dropCauses,
		ErrorReasons:    p.errorReasons,
		Restarts:        sup.Restarts,
		LastError:       sup.LastError,
		LastErrorTime:   timePtr(sup.LastAt),
		State:           state,
		StateSince:      timePtr(since),
		Store:           p.stored(),
		Shared:          p.shared(),
		Tunnels:         p.tunnels(),
	}
}

// failedPort reports a capture file that could not be opened at all:
// ended when it failed.
func failedPort(name, path string, err error) func() ports.Status {
	s := ports.Status{
		Name: name, Kind: "unknown", Source: "file:" + path,
		Errors:          map[string]uint64{"open": 1},
		SourceExhausted: true,
		StoppedEarly:    err.Error(),
		State:           ports.StateEnded,
		StateSince:      timePtr(time.Now()),
	}
	return func() ports.Status { return s }
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

func fileName(i int) string { return fmt.Sprintf("file%d", i+1) }

// losses merges the driver's and the hand-off's loss logs, oldest first.
func losses(logs ...[]capture.Loss) []ports.Loss {
	var out []ports.Loss
	for _, l := range logs {
		for _, e := range l {
			out = append(out, ports.Loss{At: e.At, Cause: e.Cause, N: e.N})
		}
	}
	slices.SortStableFunc(out, func(a, b ports.Loss) int { return a.At.Compare(b.At) })
	return out
}

// portCauses names every drop cause and error reason a port can count:
// the hand-off's, a CAN port's undecodable frame (feedCAN), and what
// its driver names (capture.Causer). A source that names none (a file,
// the sim board) exports only the hand-off's.
func portCauses(src capture.Source) (drops, errors []string) {
	drops = []string{capture.DropHandoffFull}
	if src.Kind() == capture.KindCAN {
		drops = append(drops, capture.DropUndecodable)
	}
	if c, ok := src.(capture.Causer); ok {
		d, e := c.Causes()
		drops = append(drops, d...)
		errors = e
	}
	return drops, errors
}
