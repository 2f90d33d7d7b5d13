package transmit

import (
	"sync"
	"time"
)

// Rate-limit defaults: a technician reads a VIN or a fault list a few
// times a minute; an agent looping on a tool is stopped here.
const (
	DefaultRatePlans  = 6
	DefaultRateWindow = time.Minute
)

// RateLimit allows Plans executions per port within any Window.
type RateLimit struct {
	Plans  int
	Window time.Duration
}

// limiter is a sliding-window counter per port.
type limiter struct {
	mu    sync.Mutex
	limit RateLimit
	times map[string][]time.Time
}

func newLimiter(l RateLimit) *limiter {
	return &limiter{limit: l, times: map[string][]time.Time{}}
}

// take records one execution on port at now, or reports when the next is
// allowed.
func (l *limiter) take(port string, now time.Time) (ok bool, retry time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ts := l.times[port]
	keep := ts[:0]
	for _, t := range ts {
		if now.Sub(t) < l.limit.Window {
			keep = append(keep, t)
		}
	}
	if len(keep) >= l.limit.Plans {
		l.times[port] = keep
		return false, l.limit.Window - now.Sub(keep[0])
	}
	l.times[port] = append(keep, now)
	return true, 0
}

// peek reports whether take would succeed, without recording.
func (l *limiter) peek(port string, now time.Time) (ok bool, retry time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	var oldest time.Time
	for _, t := range l.times[port] {
		if now.Sub(t) < l.limit.Window {
			if n == 0 {
				oldest = t
			}
			n++
		}
	}
	if n >= l.limit.Plans {
		return false, l.limit.Window - now.Sub(oldest)
	}
	return true, 0
}
