package statuspage

import (
	"context"
	"sync"
	"time"

	"fieldtap/services/ports"
)

// Rate bounds. Frames per second come from the port's frame counter
// sampled over time, not from frame timestamps, so a file replayed at
// speed and a live port read alike.
const (
	// rateWindow is the span a port's frames per second are measured
	// over: long enough that one bursty second of a SPAN port does not
	// swing the figure, short enough that a bus that stopped reads 0
	// within one refresh of the page.
	rateWindow = 10 * time.Second
	// rateStep is how often the counters are sampled (RunRates); a
	// sample closer than this to the newest is not kept, so a page
	// reloaded in a loop does not push the window's start out of it.
	rateStep = time.Second
	// rateSamples is one port's ring: the window's samples and the one
	// at its start. The ring is the whole memory the rates hold, per
	// port (a few hundred bytes; the ports are bounded by the
	// configuration).
	rateSamples = int(rateWindow/rateStep) + 1
	// dropWindow is the "drops in the last minute" span.
	dropWindow = time.Minute
)

// Rates keeps each port's recent frame counts for its frames per
// second. The zero value is not usable: call NewRates.
type Rates struct {
	mu    sync.Mutex
	ports map[string]*rateRing
}

type rateSample struct {
	at     time.Time
	frames uint64
}

// rateRing is one port's samples, oldest first once full.
type rateRing struct {
	s    [rateSamples]rateSample
	n    int // samples held
	next int // where the next goes
}

// NewRates returns an empty sampler.
func NewRates() *Rates { return &Rates{ports: map[string]*rateRing{}} }

// Sample records each port's frame count at now.
func (r *Rates) Sample(snap []ports.Status, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, p := range snap {
		ring := r.ports[p.Name]
		if ring == nil {
			ring = &rateRing{}
			r.ports[p.Name] = ring
		}
		if ring.n > 0 && now.Sub(ring.s[(ring.next+rateSamples-1)%rateSamples].at) < rateStep {
			continue
		}
		ring.s[ring.next] = rateSample{at: now, frames: p.Frames}
		ring.next = (ring.next + 1) % rateSamples
		ring.n = min(ring.n+1, rateSamples)
	}
}

// perSecond is a port's frames per second from the oldest sample within
// rateWindow of now to frames at now; false while no sample is at least
// rateStep old (the box or the page just started).
func (r *Rates) perSecond(name string, frames uint64, now time.Time) (float64, bool) {
	if r == nil {
		return 0, false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	ring := r.ports[name]
	if ring == nil {
		return 0, false
	}
	for i := range ring.n {
		s := ring.s[(ring.next-ring.n+i+rateSamples)%rateSamples]
		dt := now.Sub(s.at)
		if dt > rateWindow {
			continue
		}
		if dt < rateStep || frames < s.frames {
			return 0, false
		}
		return float64(frames-s.frames) / dt.Seconds(), true
	}
	return 0, false
}

// RunRates samples src's ports every rateStep until ctx ends.
func RunRates(ctx context.Context, r *Rates, src Ports) {
	t := time.NewTicker(rateStep)
	defer t.Stop()
	for {
		r.Sample(src.Snapshot(), time.Now())
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
