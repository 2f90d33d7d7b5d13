package freeport

import (
	"net"
	"strconv"
	"testing"
)

// TestPickIsFreeAndBelowTheEphemeralRange: a picked port binds on each
// network asked for, and lies where the kernel hands out no port itself.
func TestPickIsFreeAndBelowTheEphemeralRange(t *testing.T) {
	top := ephemeralLow()
	for _, n := range []string{"tcp", "udp", "udp+tcp"} {
		p := Pick(t, n)
		if p < lowest || p >= top {
			t.Fatalf("%s: port %d outside %d..%d", n, p, lowest, top-1)
		}
		addr := "127.0.0.1:" + strconv.Itoa(p)
		if n != "udp" {
			l, err := net.Listen("tcp", addr)
			if err != nil {
				t.Fatalf("%s: %v", n, err)
			}
			l.Close()
		}
		if n != "tcp" {
			c, err := net.ListenPacket("udp", addr)
			if err != nil {
				t.Fatalf("%s: %v", n, err)
			}
			c.Close()
		}
	}
}

// TestTakenPortIsNotFree: free refuses a port bound on either network.
func TestTakenPortIsNotFree(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	p := l.Addr().(*net.TCPAddr).Port
	if free(p, []string{"tcp"}) || free(p, []string{"udp", "tcp"}) {
		t.Fatalf("port %d, bound for TCP, reported free", p)
	}
	c, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if q := c.LocalAddr().(*net.UDPAddr).Port; free(q, []string{"udp"}) {
		t.Fatalf("port %d, bound for UDP, reported free", q)
	}
}
