package freeport

import (
	"net"
	"slices"
	"strconv"
	"testing"
)

// TestPickIsFreeAndOutsideTheEphemeralRange: a picked port binds on each
// network asked for, and lies where the kernel hands out no port itself.
func TestPickIsFreeAndOutsideTheEphemeralRange(t *testing.T) {
	lo, hi := ephemeral()
	for _, n := range []string{"tcp", "udp", "udp+tcp"} {
		p := Pick(t, n)
		if len(outside(lo, hi)) > 0 && (p < lowest || p >= lo && p <= hi) {
			t.Fatalf("%s: port %d below %d or in the ephemeral range %d-%d", n, p, lowest, lo, hi)
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

// TestOutsideTheRange: the spans left around ephemeral ranges.
func TestOutsideTheRange(t *testing.T) {
	for _, c := range []struct {
		lo, hi int
		want   [][2]int
	}{
		{32768, 60999, [][2]int{{lowest, 32768}, {61000, 1 << 16}}},
		{1024, 65535, nil},
		{1024, 40000, [][2]int{{40001, 1 << 16}}},
		{40000, 65535, [][2]int{{lowest, 40000}}},
	} {
		if got := outside(c.lo, c.hi); !slices.Equal(got, c.want) {
			t.Errorf("outside(%d, %d) = %v, want %v", c.lo, c.hi, got, c.want)
		}
	}
}

// TestPicksDiffer: a process is never given one port twice, though each
// was free when picked and none is bound yet.
func TestPicksDiffer(t *testing.T) {
	seen := map[int]bool{}
	for range 2000 {
		p := Pick(t, "tcp")
		if seen[p] {
			t.Fatalf("port %d given twice", p)
		}
		seen[p] = true
	}
}
