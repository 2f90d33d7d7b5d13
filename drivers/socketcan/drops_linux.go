//go:build linux

package socketcan

import (
	"os"
	"path/filepath"
)

// sysNet is where the kernel publishes per-interface counters.
const sysNet = "/sys/class/net"

// dropCounter reports the interface's rx_dropped since the session began.
// It is the controller driver's count (FIFO overruns, no buffer); drops in
// the socket's own queue need SO_RXQ_OVFL, which einride's conn does not
// surface.
type dropCounter struct {
	path string
	base uint64
	ok   bool
}

func newDropCounter(iface string) *dropCounter {
	d := &dropCounter{path: filepath.Join(sysNet, iface, "statistics", "rx_dropped")}
	d.base, d.ok = d.raw()
	return d
}

// read returns drops since the session began; 0 when the counter is absent.
func (d *dropCounter) read() uint64 {
	if !d.ok {
		return 0
	}
	v, ok := d.raw()
	if !ok || v < d.base {
		return 0
	}
	return v - d.base
}

func (d *dropCounter) raw() (uint64, bool) {
	b, err := os.ReadFile(d.path)
	if err != nil {
		return 0, false
	}
	return parseCounter(b)
}
