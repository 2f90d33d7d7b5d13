package front

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults of the two call caps (--mcp-max-concurrent,
// --mcp-rate-limit-per-peer); 0 disables either.
const (
	DefaultMaxConcurrent  = 16
	DefaultRatePerPeer    = 20
	maxTrackedPeers       = 4096 // peers whose buckets are kept; idle full ones go first
	rateRefusedRetryAfter = time.Second
)

// CodeBusy is the JSON-RPC error a refused call gets: -32000 is the
// implementation-defined server error range, and the message says to retry.
const CodeBusy = -32000

// limiter holds the two caps. They are different bounds: an agent that
// never exceeds the concurrency cap but loops as fast as answers come
// holds one slot forever, and only the rate limit stops it. A call over
// either is refused, never queued: a queue is the same exhaustion, later.
type limiter struct {
	maxConcurrent int
	perSecond     int
	now           func() time.Time

	inFlight atomic.Int64
	refused  atomic.Uint64

	mu    sync.Mutex
	peers map[string]*rateBucket
}

// rateBucket is a token bucket: perSecond tokens a second, burst perSecond.
type rateBucket struct {
	tokens float64
	last   time.Time
}

func newLimiter(maxConcurrent, perSecond int) *limiter {
	return &limiter{maxConcurrent: maxConcurrent, perSecond: perSecond, now: time.Now, peers: map[string]*rateBucket{}}
}

// admit takes a slot for one call from peer (an address, not a socket, so
// reconnecting mints no fresh allowance). It returns release, or the
// refusal text with its running total.
func (l *limiter) admit(peer string) (release func(), refusal string) {
	if !l.allowRate(peer) {
		n := l.refused.Add(1)
		return nil, fmt.Sprintf("rate limited: more than %d calls a second from %s; retry in %s (%d refused since start)", l.perSecond, peer, rateRefusedRetryAfter, n)
	}
	if l.maxConcurrent > 0 && l.inFlight.Add(1) > int64(l.maxConcurrent) {
		l.inFlight.Add(-1)
		n := l.refused.Add(1)
		return nil, fmt.Sprintf("at capacity: %d calls already running; retry shortly (%d refused since start)", l.maxConcurrent, n)
	}
	if l.maxConcurrent == 0 {
		return func() {}, ""
	}
	return func() { l.inFlight.Add(-1) }, ""
}

func (l *limiter) allowRate(peer string) bool {
	if l.perSecond <= 0 {
		return true
	}
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.peers[peer]
	if b == nil {
		if len(l.peers) >= maxTrackedPeers {
			l.forgetFull(now)
		}
		b = &rateBucket{tokens: float64(l.perSecond), last: now}
		l.peers[peer] = b
	}
	b.tokens = min(float64(l.perSecond), b.tokens+now.Sub(b.last).Seconds()*float64(l.perSecond))
	b.last = now
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// forgetFull drops peers whose buckets have refilled: forgetting them
// changes no decision. If none has, the oldest goes, so the table stays
// bounded under a flood of addresses.
func (l *limiter) forgetFull(now time.Time) {
	var oldest string
	var oldestT time.Time
	for p, b := range l.peers {
		if b.tokens+now.Sub(b.last).Seconds()*float64(l.perSecond) >= float64(l.perSecond) {
			delete(l.peers, p)
			continue
		}
		if oldest == "" || b.last.Before(oldestT) {
			oldest, oldestT = p, b.last
		}
	}
	if len(l.peers) >= maxTrackedPeers {
		delete(l.peers, oldest)
	}
}
