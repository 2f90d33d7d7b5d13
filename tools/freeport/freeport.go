package freeport

import (
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// lowest is the least port picked: clear of the well-known ports and
// the registered ones most daemons default to.
const lowest = 20000

// given holds the ports this process was given: a test picks several
// before it starts the servers that bind them, and two random picks may
// be the same port, free to both checks.
var given struct {
	sync.Mutex
	ports map[int]bool
}

// claim reports whether port is free for every network and not given
// before, and marks it given.
func claim(port int, nets []string) bool {
	given.Lock()
	defer given.Unlock()
	if given.ports[port] || !free(port, nets) {
		return false
	}
	if given.ports == nil {
		given.ports = map[int]bool{}
	}
	given.ports[port] = true
	return true
}

// Pick returns a loopback port free now for network: "tcp", "udp", or
// "udp+tcp" for a server that listens on both.
func Pick(t testing.TB, network string) int {
	t.Helper()
	var nets []string
	switch network {
	case "tcp", "udp":
		nets = []string{network}
	case "udp+tcp":
		nets = []string{"udp", "tcp"}
	default:
		t.Fatalf("freeport: network %q: want tcp, udp or udp+tcp", network)
	}
	lo, hi := ephemeral()
	spans := outside(lo, hi)
	if len(spans) == 0 {
		// The ephemeral range covers every port: the kernel's own pick,
		// free now, is the best there is.
		return kernelPick(t, nets)
	}
	for range 200 {
		sp := spans[rand.IntN(len(spans))]
		port := sp[0] + rand.IntN(sp[1]-sp[0])
		if claim(port, nets) {
			return port
		}
	}
	t.Fatalf("freeport: no loopback port outside the ephemeral range %d-%d free for %s in 200 tries", lo, hi, network)
	return 0
}

// outside is the spans, [from, to), of ports from lowest up that lie
// outside the ephemeral range lo-hi.
func outside(lo, hi int) [][2]int {
	var spans [][2]int
	if lo > lowest {
		spans = append(spans, [2]int{lowest, lo})
	}
	if from := max(hi+1, lowest); from < 1<<16 {
		spans = append(spans, [2]int{from, 1 << 16})
	}
	return spans
}

// kernelPick is a port the kernel chose for a TCP listener, free for
// every network asked for too.
func kernelPick(t testing.TB, nets []string) int {
	t.Helper()
	for range 100 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if claim(port, nets) {
			return port
		}
	}
	t.Fatal("freeport: no loopback port free in 100 tries")
	return 0
}

// Addr is Pick's port on 127.0.0.1, as host:port.
func Addr(t testing.TB, network string) string {
	t.Helper()
	return "127.0.0.1:" + strconv.Itoa(Pick(t, network))
}

// free reports whether port binds on loopback for every network.
func free(port int, nets []string) bool {
	addr := "127.0.0.1:" + strconv.Itoa(port)
	for _, n := range nets {
		if n == "udp" {
			c, err := net.ListenPacket("udp", addr)
			if err != nil {
				return false
			}
			c.Close()
			continue
		}
		l, err := net.Listen("tcp", addr)
		if err != nil {
			return false
		}
		l.Close()
	}
	return true
}

// ephemeral is the kernel's ephemeral range (Linux's
// ip_local_port_range; 32768-60999, its default, where it cannot be read).
func ephemeral() (lo, hi int) {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768, 60999
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return 32768, 60999
	}
	lo, err1 := strconv.Atoi(f[0])
	hi, err2 := strconv.Atoi(f[1])
	if err1 != nil || err2 != nil || lo > hi {
		return 32768, 60999
	}
	return lo, hi
}
