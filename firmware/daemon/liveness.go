package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"fieldtap/drivers/capture"
	"fieldtap/drivers/devwatch"
	"fieldtap/services/ports"
)

// watchInterval is how often the watchdog looks at each live port's
// device and counts what it delivered, besides every rtnetlink link
// event: well inside the 5 s in which a port gone deaf must be noticed,
// and an ioctl or a stat a second per port costs nothing.
const watchInterval = time.Second

// errDeviceGone is why the watchdog ends an attempt: the device the
// attempt opened is no longer there under its name.
var errDeviceGone = errors.New("device gone: nothing, or another device, has its name now")

// observation is what one look at a port sees.
type observation struct {
	now time.Time
	// arrivals counts what came in: frames delivered and frames dropped
	// because the hand-off was full.
	arrivals uint64
	// open is when the running attempt opened its device (the driver's
	// Stats.OpenSince); zero while none is open.
	open time.Time
	// ended is when a finite port drained or a live one was given up;
	// zero before.
	ended  time.Time
	medium capture.Medium
}

// liveness follows one port's state and since when. Each look (the
// watchdog's tick or a link event, the start and the end of an attempt,
// a finite port's drain) decides the state from an observation.
type liveness struct {
	live        bool
	silentAfter time.Duration
	started     time.Time

	mu      sync.Mutex
	state   string
	since   time.Time
	seen    uint64         // arrivals at the last look
	arrived time.Time      // when arrivals last grew; zero before any
	medium  capture.Medium // at the last look
	// failed: an attempt has failed; failedSeen is the arrivals then
	// (a frame since shows the port reopened, even from a source that
	// does not say when it opens).
	failed     bool
	failedSeen uint64
}

// verdict is what one look decided.
type verdict struct {
	from, to string
	since    time.Time
	// restart: the device the open attempt holds is gone; end the
	// attempt, the supervisor starts the next.
	restart bool
	// wake: the device is back while the port waits to reopen it; cut
	// the backoff short.
	wake bool
}

func newLiveness(live bool, silentAfter time.Duration, started time.Time) *liveness {
	return &liveness{live: live, silentAfter: silentAfter, started: started, state: ports.StateCapturing, since: started}
}

// fail records that an attempt failed when arrivals had come to
// arrivals. A count, not a time: a look may see frames first that
// arrived before the failure.
func (l *liveness) fail(arrivals uint64) {
	l.mu.Lock()
	l.failed, l.failedSeen = true, arrivals
	l.mu.Unlock()
}

// look decides the state from o, remembers it, and says what to do.
func (l *liveness) look(o observation) verdict {
	l.mu.Lock()
	defer l.mu.Unlock()
	if o.arrivals != l.seen {
		l.seen, l.arrived = o.arrivals, o.now
	}
	state, since := l.decide(o)
	back := o.medium == capture.MediumUp || o.medium == capture.MediumDown
	v := verdict{
		from: l.state, to: state, since: l.since,
		restart: !o.open.IsZero() && o.medium == capture.MediumGone,
		wake:    l.reopening(o) && l.medium == capture.MediumGone && back,
	}
	if state != l.state {
		l.state, l.since, v.since = state, since, since
	}
	l.medium = o.medium
	return v
}

// decide is the state o shows and since when it holds, in order of
// precedence: a port that ended; a finite one delivering; a device gone
// (even with an attempt open: it captures nothing more); a port waiting
// to reopen or reopening; a link down; quiet past silent_after; else
// capturing.
func (l *liveness) decide(o observation) (string, time.Time) {
	switch {
	case !o.ended.IsZero():
		return ports.StateEnded, o.ended
	case !l.live:
		return ports.StateCapturing, o.now
	case o.medium == capture.MediumGone:
		return ports.StateGone, o.now
	case l.reopening(o):
		return ports.StateRestarting, o.now
	case o.medium == capture.MediumDown:
		return ports.StateDown, o.now
	}
	// The allowance runs from the last arrival, or from when the device
	// was opened or the port started if that is later: a port reopened
	// after a fault has its whole allowance again.
	quiet := latest(l.arrived, o.open, l.started)
	if o.now.Sub(quiet) >= l.silentAfter {
		return ports.StateSilent, quiet
	}
	return ports.StateCapturing, o.now
}

// latest is the latest of ts.
func latest(ts ...time.Time) time.Time {
	var t time.Time
	for _, u := range ts {
		if u.After(t) {
			t = u
		}
	}
	return t
}

// reopening: an attempt failed and no device has been opened, nor has a
// frame arrived, since (a source that does not say when it opens shows
// it by delivering).
func (l *liveness) reopening(o observation) bool {
	return l.failed && o.open.IsZero() && o.arrivals == l.failedSeen
}

// current is the state and since when, as the last look left them.
func (l *liveness) current() (string, time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.state, l.since
}

// watch looks at the port every watchInterval and whenever it is poked
// (a link event), until ctx ends.
func (p *port) watch(ctx context.Context, log *slog.Logger) {
	t := time.NewTicker(watchInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-p.poked:
		}
		p.look(log)
	}
}

// poke asks the watchdog for a look now; pokes while one is pending
// merge.
func (p *port) poke() {
	select {
	case p.poked <- struct{}{}:
	default:
	}
}

// look observes the port, records its state, logs a change, and acts on
// the verdict: an attempt whose device is gone is ended (the supervisor
// restarts it and counts it), a supervisor waiting to reopen a device
// that is back is woken.
func (p *port) look(log *slog.Logger) {
	v := p.live.look(p.observe())
	name := p.src.Name()
	if v.restart {
		p.endAttempt(fmt.Errorf("watchdog: %s: %w", p.src.Origin(), errDeviceGone))
	}
	if v.wake {
		log.Info("port device back; opening it now", "port", name, "source", p.src.Origin())
		p.sup.Wake()
	}
	if v.from == v.to {
		return
	}
	level := slog.LevelInfo
	switch v.to {
	case ports.StateGone, ports.StateDown, ports.StateRestarting:
		level = slog.LevelWarn
	}
	log.Log(context.Background(), level, "port state", "port", name, "state", v.to, "was", v.from, "since", v.since)
}

// arrivals is what came in: frames delivered and frames the hand-off
// had to drop.
func (p *port) arrivals() uint64 {
	h := p.counters.Snapshot()
	return h.Frames + h.Drops[capture.DropHandoffFull]
}

// observe gathers what a look decides on.
func (p *port) observe() observation {
	o := observation{
		now:      time.Now(),
		arrivals: p.arrivals(),
		open:     p.src.Stats().OpenSince,
		medium:   capture.MediumUnknown,
	}
	if probed(p) {
		o.medium = p.src.(capture.Prober).Probe()
	}
	if sup := p.sup.Status(); sup.Stopped != "" {
		o.ended = sup.LastAt
	} else if at := p.drainedAt.Load(); at != 0 && !p.src.Live() {
		o.ended = time.Unix(0, at)
	}
	return o
}

// endAttempt cancels the running attempt, if any, with cause.
func (p *port) endAttempt(cause error) {
	p.attemptMu.Lock()
	defer p.attemptMu.Unlock()
	if p.stopAttempt != nil {
		p.stopAttempt(cause)
	}
}

// probed reports whether p's device can be looked at: a live source
// that answers capture.Prober.
func probed(p *port) bool {
	_, ok := p.src.(capture.Prober)
	return ok && p.src.Live()
}

// watchLinks pokes every port's watchdog on each rtnetlink link event
// until ctx ends, so an interface that goes away, comes back or loses
// its carrier is looked at when it happens. Without rtnetlink the ports
// are still looked at every watchInterval.
func watchLinks(ctx context.Context, started []*port, log *slog.Logger) {
	err := devwatch.WatchLinks(ctx, func() {
		for _, p := range started {
			p.poke()
		}
	})
	if err != nil {
		log.Warn("no link events; ports are looked at every second only", "err", err, "every", watchInterval)
	}
}
