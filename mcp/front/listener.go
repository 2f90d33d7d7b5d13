package front

import (
	"fmt"
	"log/slog"
	"net"
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

// refusedConnWrite bounds writing the one-line refusal to a connection
// over the cap: the accept loop must not wait on a client that does not
// read.
const refusedConnWrite = 100 * time.Millisecond

// refusedConnAnswer is what a connection over the cap reads before it is
// closed: an HTTP client shows the reason instead of a bare reset.
const refusedConnAnswer = "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\nRetry-After: 1\r\nContent-Length: %d\r\n\r\n%s"

// connLimiter is a net.Listener that holds each peer address to a number
// of open connections; past it a connection is answered 503 and closed,
// counted and logged.
type connLimiter struct {
	net.Listener
	perAddr int
	log     *slog.Logger

	mu      sync.Mutex
	open    map[string]int
	refused atomic.Uint64
}

// LimitConns wraps ln so that each peer address holds at most perAddr
// open connections; perAddr < 1 means DefaultConnsPerAddr.
func LimitConns(ln net.Listener, perAddr int, log *slog.Logger) net.Listener {
	if perAddr < 1 {
		perAddr = DefaultConnsPerAddr
	}
	return &connLimiter{Listener: ln, perAddr: perAddr, log: log, open: map[string]int{}}
}

// Accept returns the next connection within its address's bound.
func (l *connLimiter) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		addr := hostOf(c.RemoteAddr())
		l.mu.Lock()
		over := l.open[addr] >= l.perAddr
		if !over {
			l.open[addr]++
		}
		l.mu.Unlock()
		if !over {
			return &limitedConn{Conn: c, l: l, addr: addr}, nil
		}
		n := l.refused.Add(1)
		msg := fmt.Sprintf("more than %d connections from %s; close some and retry\n", l.perAddr, addr)
		c.SetWriteDeadline(time.Now().Add(refusedConnWrite))
		fmt.Fprintf(c, refusedConnAnswer, len(msg), msg)
		c.Close()
		l.log.Warn("connection refused: over the per-address cap", "peer", addr, "cap", l.perAddr, "refused_since_start", n)
	}
}

func (l *connLimiter) release(addr string) {
	l.mu.Lock()
	if l.open[addr]--; l.open[addr] <= 0 {
		delete(l.open, addr)
	}
	l.mu.Unlock()
}

// limitedConn gives its address's slot back once, on the first Close.
type limitedConn struct {
	net.Conn
	l    *connLimiter
	addr string
	once sync.Once
}

func (c *limitedConn) Close() error {
	c.once.Do(func() { c.l.release(c.addr) })
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
