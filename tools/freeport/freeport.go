package freeport

import (
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
)

// lowest is the least port picked: clear of the well-known ports and
// the registered ones most daemons default to.
const lowest = 20000

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
	top := ephemeralLow()
	if top <= lowest {
		t.Fatalf("freeport: the ephemeral range starts at %d, below the %d this package picks from", top, lowest)
	}
	for range 200 {
		port := lowest + rand.IntN(top-lowest)
		if free(port, nets) {
			return port
		}
	}
	t.Fatalf("freeport: no loopback port in %d..%d free for %s in 200 tries", lowest, top-1, network)
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

// ephemeralLow is the first port of the kernel's ephemeral range (Linux's
// ip_local_port_range; 32768, its default, where it cannot be read).
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 32768
	}
	n, err := strconv.Atoi(f[0])
	if err != nil {
		return 32768
	}
	return n
}
