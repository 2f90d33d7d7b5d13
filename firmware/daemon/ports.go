package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"fieldtap/drivers/capture"
	"fieldtap/firmware/supervise"
	"fieldtap/services/ports"
	"fieldtap/services/ring"
)

// port is one running capture port: its source and the supervisor that
// restarts it, its hand-off counters, what consumes its frames and the
// store that keeps them.
type port struct {
	src      capture.Source
	sup      *supervise.Supervisor
	handoff  *capture.Handoff
	counters capture.Counters          // deliveries and hand-off drops
	consume  func(capture.Frame) error // an error counts the frame DropUndecodable
	stored   func() ring.Stats
}

func newPort(src capture.Source, depth int, an *analysers, so supervise.Options) (*port, error) {
	sup, err := supervise.New(so)
	if err != nil {
		return nil, err
	}
	consume, stored, err := an.attach(src.Name(), src.Kind())
	if err != nil {
		return nil, err
	}
	p := &port{src: src, sup: sup, consume: consume, stored: stored}
	p.handoff = capture.NewHandoff(depth, &p.counters)
	return p, nil
}

// run starts the source under its supervisor, and the consumer that
// stores its frames. A live source that fails is started again with
// backoff, the same hand-off carrying on; both goroutines end when ctx
// does or a finite source is exhausted.
func (p *port) run(ctx context.Context, wg *sync.WaitGroup, log *slog.Logger) {
	wg.Add(2)
	go func() {
		defer wg.Done()
		defer p.handoff.Close()
		log.Info("port started", "port", p.src.Name(), "kind", p.src.Kind(), "source", p.src.Origin())
		err := p.sup.Run(ctx, p.src.Live(), func(ctx context.Context) error { return p.attempt(ctx, log) })
		switch {
		case err != nil:
			log.Error("port stopped early", "port", p.src.Name(), "err", err)
		case !p.src.Live():
			log.Info("port exhausted", "port", p.src.Name())
		}
	}()
	go func() {
		defer wg.Done()
		for f := range p.handoff.Frames() {
			if p.consume(f) != nil {
				p.counters.Drop(capture.DropUndecodable, 1)
			}
		}
	}()
}

// attempt is one run of the source (run1). An error no restart can fix
// stops the supervisor; any other failure of a live port is logged and
// retried.
func (p *port) attempt(ctx context.Context, log *slog.Logger) error {
	err := p.src.Run(ctx, p.handoff)
	if errors.Is(err, capture.ErrUnsupported) {
		return fmt.Errorf("%w (%w)", err, supervise.ErrPermanent)
	}
	if ctx.Err() == nil && p.src.Live() {
		log.Warn("port failed; restarting", "port", p.src.Name(), "err", err, "restarts", p.sup.Status().Restarts)
	}
	return err
}

func (p *port) status() ports.Status {
	s := p.src.Stats()
	h := p.counters.Snapshot()
	st := p.stored()
	sup := p.sup.Status()
	drops := map[string]uint64{}
	for k, v := range s.Drops {
		drops[k] += v
	}
	for k, v := range h.Drops {
		drops[k] += v
	}
	stopped := s.StoppedEarly
	if stopped == "" {
		stopped = sup.Stopped
	}
	return ports.Status{
		Name:            p.src.Name(),
		Kind:            string(p.src.Kind()),
		Source:          p.src.Origin(),
		Live:            p.src.Live(),
		Frames:          h.Frames,
		Bytes:           h.Bytes,
		Drops:           drops,
		Errors:          s.Errors,
		FirstTime:       timePtr(h.First),
		LastTime:        timePtr(h.Last),
		SourceExhausted: s.Exhausted,
		StoppedEarly:    stopped,
		Restarts:        sup.Restarts,
		LastError:       sup.LastError,
		LastErrorTime:   timePtr(sup.LastAt),
		Store: ports.StoreStatus{
			Frames: st.Items, Bytes: st.Bytes,
			MaxFrames: st.Limits.Items, MaxBytes: st.Limits.Bytes,
			Evicted: st.Evicted, Oversize: st.Oversize, Revision: st.Revision,
		},
	}
}

// failedPort reports a capture file that could not be opened at all.
func failedPort(name, path string, err error) func() ports.Status {
	s := ports.Status{
		Name: name, Kind: "unknown", Source: "file:" + path,
		Errors:          map[string]uint64{"open": 1},
		SourceExhausted: true,
		StoppedEarly:    err.Error(),
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
