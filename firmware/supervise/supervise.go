package supervise

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Restart pacing. An unplugged USB adapter fails every attempt until it is
// plugged back, so retries back off instead of spinning; a part that ran
// for a while before it failed has hit a new fault and starts again at
// the shortest wait.
const (
	// DefaultMinBackoff is the first wait: long enough that a tight
	// failure loop costs nothing, short enough that a USB glitch loses
	// well under a second of traffic.
	DefaultMinBackoff = 500 * time.Millisecond
	// DefaultMaxBackoff caps the doubling: a re-plugged adapter is found
	// within this long.
	DefaultMaxBackoff = 30 * time.Second
	// DefaultHealthy is how long an attempt must run for its failure to
	// count as a new fault (the backoff resets).
	DefaultHealthy = DefaultMaxBackoff
)

// ErrPermanent marks an attempt's error that another attempt cannot fix
// (the facility does not exist on this system): the Supervisor stops
// instead of retrying. Wrap it: fmt.Errorf("…: %w", ErrPermanent).
var ErrPermanent = errors.New("not restartable")

// ErrEnded is the error recorded when an attempt of a part that should
// run until cancelled returns nil before its context ends.
var ErrEnded = errors.New("ended before it was stopped")

// Options pace the restarts. Zero fields take the defaults.
type Options struct {
	MinBackoff time.Duration // DefaultMinBackoff
	MaxBackoff time.Duration // DefaultMaxBackoff
	Healthy    time.Duration // DefaultHealthy
}

// check fills defaults and validates once, at construction.
func (o *Options) check() error {
	if o.MinBackoff == 0 {
		o.MinBackoff = DefaultMinBackoff
	}
	if o.MaxBackoff == 0 {
		o.MaxBackoff = DefaultMaxBackoff
	}
	if o.Healthy == 0 {
		o.Healthy = DefaultHealthy
	}
	if o.MinBackoff < 0 || o.MaxBackoff < o.MinBackoff || o.Healthy < 0 {
		return fmt.Errorf("supervise: backoff %v..%v, healthy %v: want 0 < min <= max and healthy >= 0", o.MinBackoff, o.MaxBackoff, o.Healthy)
	}
	return nil
}

// Status is what a Supervisor reports.
type Status struct {
	Attempts  uint64    // attempts started
	Restarts  uint64    // attempts started after a failure (Attempts-1 while running)
	LastError string    // why the last failed attempt ended; "" before any failure
	LastAt    time.Time // when it ended; zero before any failure
	// Stopped says why the Supervisor gave up (ErrPermanent); "" while it
	// runs or after a normal end.
	Stopped string
}

// Supervisor runs one part. It is safe for concurrent use: Status and
// Wake may be called while Run runs.
type Supervisor struct {
	o    Options
	wake chan struct{} // one pending Wake; it cuts the next backoff short
	mu   sync.Mutex
	st   Status
}

// New checks o once and returns a Supervisor.
func New(o Options) (*Supervisor, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	return &Supervisor{o: o, wake: make(chan struct{}, 1)}, nil
}

// Wake ends the backoff under way, or the next one if an attempt is
// running, so the next attempt starts at once: the part's device is
// back (an interface reappeared, a tty node was made again) and waiting
// out a backoff of up to MaxBackoff would only lose traffic. Wakes
// given before an attempt starts are forgotten, so a stale one never
// skips the backoff after a failure it did not foresee. The backoff
// itself is not reset: an attempt that fails again waits longer.
func (s *Supervisor) Wake() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Status returns a copy of the counters.
func (s *Supervisor) Status() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st
}

// Run calls run1 until ctx ends. When restart is false (a finite part,
// such as a capture file) the first attempt is the only one and its error
// is returned. Otherwise an attempt that returns, with an error or
// without one (ErrEnded), is counted and run again after the backoff; an
// error wrapping ErrPermanent stops the loop and is returned. Run returns
// nil once ctx ends.
func (s *Supervisor) Run(ctx context.Context, restart bool, run1 func(context.Context) error) error {
	var backoff time.Duration
	for {
		start := time.Now()
		select {
		case <-s.wake:
		default:
		}
		s.update(func(st *Status) {
			if st.Attempts > 0 {
				st.Restarts++
			}
			st.Attempts++
		})
		err := run1(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if !restart {
			return err
		}
		if err == nil {
			err = ErrEnded
		}
		s.update(func(st *Status) { st.LastError, st.LastAt = err.Error(), time.Now() })
		if errors.Is(err, ErrPermanent) {
			s.update(func(st *Status) { st.Stopped = err.Error() })
			return err
		}
		backoff = s.o.next(backoff, time.Since(start))
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		case <-s.wake:
			t.Stop()
		}
	}
}

// next is the wait after a failed attempt that ran for ran, when the wait
// before it was prev (0 before the first failure): double it up to the
// cap, or start again at the shortest after a healthy run.
func (o Options) next(prev, ran time.Duration) time.Duration {
	if prev == 0 || ran >= o.Healthy {
		return o.MinBackoff
	}
	return min(2*prev, o.MaxBackoff)
}

func (s *Supervisor) update(f func(*Status)) {
	s.mu.Lock()
	f(&s.st)
	s.mu.Unlock()
}
