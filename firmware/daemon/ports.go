package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"fieldtap/drivers/capture"
	"fieldtap/services/budget"
	"fieldtap/services/ports"
)

// port is one running capture port: its source, its hand-off counters,
// what consumes its frames and the store that keeps them.
type port struct {
	src      capture.Source
	handoff  *capture.Handoff
	counters capture.Counters // deliveries and hand-off drops
	consume  consumer
	stored   func() budget.Use
	shared   func() []budget.Use
	// drained is set once the consumer has taken and released every
	// frame the source handed off: only then is a finite port exhausted.
	drained atomic.Bool
}

func newPort(src capture.Source, depth int, an *analysers) (*port, error) {
	consume, stored, err := an.attach(src.Name(), src.Kind())
	if err != nil {
		return nil, err
	}
	kind := src.Kind()
	p := &port{src: src, consume: consume, stored: stored, shared: func() []budget.Use { return an.shared(kind) }}
	p.handoff = capture.NewHandoff(depth, &p.counters)
	an.handoffsMu.Lock()
	an.handoffs[src.Name()] = p.handoff
	an.handoffsMu.Unlock()
	return p, nil
}

// run starts the source and the consumer that stores its frames; both end
// when ctx does or the source is exhausted.
func (p *port) run(ctx context.Context, wg *sync.WaitGroup, log *slog.Logger) {
	wg.Add(2)
	go func() {
		defer wg.Done()
		defer p.handoff.Close()
		log.Info("port started", "port", p.src.Name(), "kind", p.src.Kind(), "source", p.src.Origin())
		if err := p.src.Run(ctx, p.handoff); err != nil {
			log.Error("port stopped early", "port", p.src.Name(), "err", err)
			return
		}
		if !p.src.Live() {
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
			frames += uint64(len(b.Frames))
			p.handoff.Release(b)
		}
		p.drained.Store(true)
		if !p.src.Live() {
			// Every frame the file held is in the stores: what a batch
			// run or a benchmark waits for.
			log.Info("port drained", "port", p.src.Name(), "frames", frames, "seconds", time.Since(start).Seconds())
		}
	}()
}

func (p *port) status() ports.Status {
	s := p.src.Stats()
	h := p.counters.Snapshot()
	drops := map[string]uint64{}
	for k, v := range s.Drops {
		drops[k] += v
	}
	for k, v := range h.Drops {
		drops[k] += v
	}
	return ports.Status{
		Name:      p.src.Name(),
		Kind:      string(p.src.Kind()),
		Source:    p.src.Origin(),
		Live:      p.src.Live(),
		Frames:    h.Frames,
		Bytes:     h.Bytes,
		Drops:     drops,
		Errors:    s.Errors,
		FirstTime: timePtr(h.First),
		LastTime:  timePtr(h.Last),
		// A finite source is exhausted once it delivered all it will and
		// the analysers consumed all of it (DESIGN.md §4).
		SourceExhausted: s.Exhausted && p.drained.Load(),
		StoppedEarly:    s.StoppedEarly,
		Store:           p.stored(),
		Shared:          p.shared(),
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
