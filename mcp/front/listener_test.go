package front

import (
	"bufio"
	"net"
	"net/http"
	"testing"
	"time"
)

// TestConnsPerAddrCapped holds a peer to its cap: the connection past it
// reads a 503 naming the cap and is closed, and a slot freed by Close is
// usable again.
func TestConnsPerAddrCapped(t *testing.T) {
	const perAddr = 3
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	pool := NewConnPool(0, perAddr, testLog())
	l := pool.Listener(ln)
	defer l.Close()
	accepted := make(chan net.Conn, perAddr+1)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	dial := func() net.Conn {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	var held []net.Conn
	for range perAddr {
		dial()
		select {
		case c := <-accepted:
			held = append(held, c)
		case <-time.After(giveUpTest):
			t.Fatal("a connection within the cap was not accepted")
		}
	}
	over := dial()
	over.SetReadDeadline(time.Now().Add(giveUpTest))
	resp, err := http.ReadResponse(bufio.NewReader(over), nil)
	if err != nil || resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || pool.Stats().RefusedPerAddress != 1 {
		t.Fatalf("connection over the cap: %v, %v, %+v; want a 503 with Retry-After and one refusal", resp, err, pool.Stats())
	}
	held[0].Close()
	held[0].Close() // a second Close gives back nothing more
	dial()
	select {
	case <-accepted:
	case <-time.After(giveUpTest):
		t.Fatal("a freed slot was not given back")
	}
	dial()
	deadline := time.Now().Add(giveUpTest)
	for pool.Stats().RefusedPerAddress != 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if s := pool.Stats(); s.RefusedPerAddress != 2 || s.Open != perAddr {
		t.Errorf("%+v, want 2 refused and %d open: a double Close freed two slots", s, perAddr)
	}
}

// TestGlobalCapClosesIdleThenRefuses: two listeners share one pool of
// two connections. While both serve requests a third is refused with a
// 503; once one is idle the third takes its place and the idle one is
// closed; a connection the server closed gives its slot back.
func TestGlobalCapClosesIdleThenRefuses(t *testing.T) {
	pool := NewConnPool(2, 0, testLog())
	accepted := make(chan net.Conn, 4)
	var addrs []string
	for range 2 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		l := pool.Listener(ln)
		t.Cleanup(func() { l.Close() })
		addrs = append(addrs, ln.Addr().String())
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				accepted <- c
			}
		}()
	}
	dial := func(addr string) net.Conn {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	take := func() net.Conn {
		select {
		case c := <-accepted:
			return c
		case <-time.After(giveUpTest):
			t.Fatal("a connection within the cap was not accepted")
			return nil
		}
	}
	first := dial(addrs[0])
	a := take()
	dial(addrs[1])
	b := take()
	pool.ConnState(a, http.StateActive)
	pool.ConnState(b, http.StateActive)

	over := dial(addrs[0])
	over.SetReadDeadline(time.Now().Add(giveUpTest))
	resp, err := http.ReadResponse(bufio.NewReader(over), nil)
	if err != nil || resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("connection over the global cap with none idle: %v, %v; want a 503 with Retry-After", resp, err)
	}
	if s := pool.Stats(); s.RefusedGlobal != 1 || s.Open != 2 || s.Max != 2 {
		t.Fatalf("%+v, want one global refusal and 2 open", s)
	}

	pool.ConnState(a, http.StateIdle)
	dial(addrs[1])
	c := take()
	first.SetReadDeadline(time.Now().Add(giveUpTest))
	if n, err := first.Read(make([]byte, 1)); n != 0 || err == nil {
		t.Fatalf("the idle connection read %d bytes, %v; want it closed", n, err)
	}
	if s := pool.Stats(); s.ClosedIdle != 1 || s.Open != 2 || s.RefusedGlobal != 1 {
		t.Fatalf("%+v, want one idle connection closed for the new one, 2 open", s)
	}
	a.Close() // the server's own Close of the taken connection frees nothing more
	pool.ConnState(c, http.StateNew)
	pool.ConnState(c, http.StateClosed)
	b.Close()
	c.Close()
	if s := pool.Stats(); s.Open != 0 {
		t.Fatalf("%+v, want every slot given back", s)
	}
}
