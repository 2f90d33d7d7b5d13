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
	l := LimitConns(ln, perAddr, testLog()).(*connLimiter)
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
	if err != nil || resp.StatusCode != http.StatusServiceUnavailable || l.refused.Load() != 1 {
		t.Fatalf("connection over the cap: %v, %v, refused %d; want a 503 and one refusal", resp, err, l.refused.Load())
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
	for l.refused.Load() != 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if l.refused.Load() != 2 {
		t.Errorf("refused %d, want 2: a double Close freed two slots", l.refused.Load())
	}
}
