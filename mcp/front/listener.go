package front

import (
	"container/list"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultConnsPerAddr bounds the connections one peer address holds open
// at once. An agent needs a few (a call, its event stream, a
// reconnect); a crowd of connections from one address is a client
// exhausting descriptors, and past the bound it is refused at accept,
// before it can hold one for a whole header timeout.
const DefaultConnsPerAddr = 32

// DefaultMaxConns bounds the connections every HTTP listener of the box
// holds open together (the MCP endpoint, the status page and /metrics).
// A few agents and dashboards need tens; the bound is what a crowd of
// addresses, each within its per-address cap, can make the box hold:
// 3 MiB of the budget at ConnBytes each.
const DefaultMaxConns = 128

// ConnBytes is what one open connection costs the heap: net/http's
// per-connection goroutine (its stack grows to 8–16 KiB while it reads a
// request), its 4 KiB read and write buffers and the connection's own
// state. 10,000 idle connections took 172 MiB of RSS before the global
// cap (issue #39): 17.6 KiB each; 24 KiB leaves room for the collector's
// overhead. The daemon reserves DefaultMaxConns of them in the memory
// budget.
const ConnBytes = 24 << 10

// refusedConnWrite bounds writing the one-line refusal to a connection
// over the cap: the accept loop must not wait on a client that does not
// read.
const refusedConnWrite = 100 * time.Millisecond

// refusedConnAnswer is what a connection over the cap reads before it is
// closed: an HTTP client shows the reason instead of a bare reset.
const refusedConnAnswer = "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\nRetry-After: 1\r\nContent-Length: %d\r\n\r\n%s"

// refusalLogEvery spaces the warnings about refused and closed
// connections: a flood of them must not become a flood of log lines.
// Each warning carries the running totals.
const refusalLogEvery = 10 * time.Second

// ConnStats are a pool's counters since start.
type ConnStats struct {
	Open, Max         int
	RefusedPerAddress uint64 // refused: the peer address held its cap
	RefusedGlobal     uint64 // refused: the pool was full of connections serving requests
	ClosedIdle        uint64 // closed to make room: idle (no request in flight) and the oldest such
}

// ConnPool bounds the connections of every listener it wraps: each peer
// address to perAddr, all of them together to max. At the global bound
// a new connection takes the place of the connection that has been idle
// longest (one that never sent a request, or a keep-alive one between
// requests), so a crowd of idle connections cannot lock out a client
// that has a call to make; only when every connection is serving a
// request is the new one answered 503 with Retry-After and closed. Both
// refusals and the closings are counted and logged at most once per
// refusalLogEvery.
//
// The pool learns which connections are idle from the http.Server's
// ConnState hook: set ConnState on every server whose listener it wraps.
type ConnPool struct {
	max, perAddr int
	log          *slog.Logger

	mu      sync.Mutex
	open    int
	perPeer map[string]int
	idle    list.List // *limitedConn, longest idle first
	lastLog time.Time

	refusedAddr, refusedGlobal, closedIdle atomic.Uint64
}

// NewConnPool bounds connections to max in all and perAddr per peer
// address; values below 1 mean DefaultMaxConns and DefaultConnsPerAddr.
func NewConnPool(max, perAddr int, log *slog.Logger) *ConnPool {
	if max < 1 {
		max = DefaultMaxConns
	}
	if perAddr < 1 {
		perAddr = DefaultConnsPerAddr
	}
	return &ConnPool{max: max, perAddr: perAddr, log: log, perPeer: map[string]int{}}
}

// Listener wraps ln: its Accept returns only connections within the
// pool's bounds.
func (p *ConnPool) Listener(ln net.Listener) net.Listener {
	return &connLimiter{Listener: ln, p: p}
}

// Stats are the pool's counters now.
func (p *ConnPool) Stats() ConnStats {
	p.mu.Lock()
	open := p.open
	p.mu.Unlock()
	return ConnStats{Open: open, Max: p.max, RefusedPerAddress: p.refusedAddr.Load(),
		RefusedGlobal: p.refusedGlobal.Load(), ClosedIdle: p.closedIdle.Load()}
}

// ConnState is the http.Server hook that tells the pool which of its
// connections are idle, hence may be closed to make room.
func (p *ConnPool) ConnState(c net.Conn, s http.ConnState) {
	lc, ok := c.(*limitedConn)
	if !ok {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if lc.released {
		return
	}
	switch s {
	case http.StateNew, http.StateIdle:
		if lc.idle == nil {
			lc.idle = p.idle.PushBack(lc)
		}
	default: // active, hijacked, closed: not to be taken
		if lc.idle != nil {
			p.idle.Remove(lc.idle)
			lc.idle = nil
		}
	}
}

// admit takes a slot for a connection from addr. It returns the
// connection to close to make room (nil if none), or the refusal.
func (p *ConnPool) admit(c *limitedConn) (victim *limitedConn, refusal string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.perPeer[c.addr] >= p.perAddr {
		p.refusedAddr.Add(1)
		return nil, fmt.Sprintf("more than %d connections from %s; close some and retry\n", p.perAddr, c.addr)
	}
	if p.open >= p.max {
		e := p.idle.Front()
		if e == nil {
			p.refusedGlobal.Add(1)
			return nil, fmt.Sprintf("the box holds %d connections, every one serving a request; retry shortly\n", p.max)
		}
		victim = e.Value.(*limitedConn)
		p.releaseLocked(victim)
		p.closedIdle.Add(1)
	}
	p.open++
	p.perPeer[c.addr]++
	return victim, ""
}

// releaseLocked gives c's slot back, once.
func (p *ConnPool) releaseLocked(c *limitedConn) {
	if c.released {
		return
	}
	c.released = true
	if c.idle != nil {
		p.idle.Remove(c.idle)
		c.idle = nil
	}
	p.open--
	if p.perPeer[c.addr]--; p.perPeer[c.addr] <= 0 {
		delete(p.perPeer, c.addr)
	}
}

func (p *ConnPool) release(c *limitedConn) {
	p.mu.Lock()
	p.releaseLocked(c)
	p.mu.Unlock()
}

// warn logs what the pool refused and closed, at most once per
// refusalLogEvery; the totals say what the quiet spell left out.
func (p *ConnPool) warn(why, peer string) {
	now := time.Now()
	p.mu.Lock()
	quiet := now.Sub(p.lastLog) < refusalLogEvery
	if !quiet {
		p.lastLog = now
	}
	p.mu.Unlock()
	if quiet {
		return
	}
	s := p.Stats()
	p.log.Warn("connections refused or closed at the connection caps", "last", why, "peer", peer,
		"per_address_cap", p.perAddr, "global_cap", p.max, "open", s.Open,
		"refused_per_address", s.RefusedPerAddress, "refused_global", s.RefusedGlobal, "closed_idle", s.ClosedIdle)
}

// connLimiter is one listener of a pool.
type connLimiter struct {
	net.Listener
	p *ConnPool
}

// Accept returns the next connection within the pool's bounds.
func (l *connLimiter) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		lc := &limitedConn{Conn: c, p: l.p, addr: hostOf(c.RemoteAddr())}
		victim, refusal := l.p.admit(lc)
		if refusal == "" {
			if victim != nil {
				victim.Conn.Close() // its server goroutine sees the error and ends
				l.p.warn("closed the longest-idle connection to make room", victim.addr)
			}
			return lc, nil
		}
		c.SetWriteDeadline(time.Now().Add(refusedConnWrite))
		fmt.Fprintf(c, refusedConnAnswer, len(refusal), refusal)
		c.Close()
		l.p.warn(refusal[:len(refusal)-1], lc.addr)
	}
}

// limitedConn gives its slot back once, on the first Close or when the
// pool takes it to make room.
type limitedConn struct {
	net.Conn
	p    *ConnPool
	addr string
	// Guarded by p.mu.
	released bool
	idle     *list.Element
}

func (c *limitedConn) Close() error {
	c.p.release(c)
	return c.Conn.Close()
}

// hostOf is a remote address without its port, as peerOf is for requests.
func hostOf(a net.Addr) string {
	if h, _, err := net.SplitHostPort(a.String()); err == nil {
		return h
	}
	return a.String()
}

var _ net.Listener = (*connLimiter)(nil)
