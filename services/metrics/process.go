package metrics

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
)

// userHZ is the kernel's clock tick for /proc times (USER_HZ, 100 on
// every Linux architecture the box runs on).
const userHZ = 100

// procStat is what process_ series take from /proc/self/stat.
type procStat struct {
	cpuTicks   uint64 // utime + stime
	startTicks uint64 // since boot
	vsize      uint64 // bytes
	rssPages   int64
}

// parseStat reads /proc/PID/stat. The command name is in parentheses
// and may itself hold spaces and parentheses, so fields are counted
// after the last ')'.
func parseStat(b []byte) (procStat, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procStat{}, fmt.Errorf("/proc/self/stat: no ')' after the command name")
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state); utime is field 14, stime 15,
	// starttime 22, vsize 23, rss 24.
	if len(f) < 22 {
		return procStat{}, fmt.Errorf("/proc/self/stat: %d fields after the command name, want at least 22", len(f))
	}
	var st procStat
	var err error
	num := func(field int) uint64 {
		v, e := strconv.ParseUint(f[field-3], 10, 64)
		if e != nil && err == nil {
			err = fmt.Errorf("/proc/self/stat field %d: %w", field, e)
		}
		return v
	}
	st.cpuTicks = num(14) + num(15)
	st.startTicks = num(22)
	st.vsize = num(23)
	rss, e := strconv.ParseInt(f[24-3], 10, 64)
	if e != nil && err == nil {
		err = fmt.Errorf("/proc/self/stat field 24: %w", e)
	}
	st.rssPages = rss
	return st, err
}

// parseBootTime is btime (seconds since the epoch) of /proc/stat.
func parseBootTime(b []byte) (uint64, error) {
	for l := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(l, "btime "); ok {
			return strconv.ParseUint(strings.TrimSpace(v), 10, 64)
		}
	}
	return 0, fmt.Errorf("/proc/stat: no btime line")
}

// parseLimit is the soft limit of the /proc/self/limits row that starts
// with name; unlimited is the largest uint64, as the kernel means it.
func parseLimit(b []byte, name string) (float64, error) {
	for l := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(l, name); ok {
			f := strings.Fields(rest)
			if len(f) == 0 {
				break
			}
			if f[0] == "unlimited" {
				return math.MaxUint64, nil
			}
			v, err := strconv.ParseUint(f[0], 10, 64)
			if err != nil {
				return 0, fmt.Errorf("/proc/self/limits %q: %w", name, err)
			}
			return float64(v), nil
		}
	}
	return 0, fmt.Errorf("/proc/self/limits: no %q row", name)
}

// parseNetDev sums received and sent bytes over every interface of
// /proc/self/net/dev (the process's network namespace).
func parseNetDev(b []byte) (rx, tx uint64, err error) {
	for l := range strings.Lines(string(b)) {
		_, counters, ok := strings.Cut(l, ":")
		if !ok {
			continue // the two header lines
		}
		f := strings.Fields(counters)
		if len(f) < 9 {
			return 0, 0, fmt.Errorf("/proc/self/net/dev: %d counters in %q, want 16", len(f), strings.TrimSpace(l))
		}
		r, err1 := strconv.ParseUint(f[0], 10, 64)
		t, err2 := strconv.ParseUint(f[8], 10, 64)
		if err1 != nil || err2 != nil {
			return 0, 0, fmt.Errorf("/proc/self/net/dev: bad byte counter in %q", strings.TrimSpace(l))
		}
		rx += r
		tx += t
	}
	return rx, tx, nil
}

// processSeries are the process_ series the client library's process
// collector exported on Linux, read from /proc. A file that cannot be
// read leaves its series out, as the client did.
func processSeries(e *exposition) {
	gauge := func(name, help string, v float64) { e.addPairs(name, help, typeGauge, "", v) }
	counter := func(name, help string, v float64) { e.addPairs(name, help, typeCounter, "", v) }
	if b, err := os.ReadFile("/proc/self/stat"); err == nil {
		if st, err := parseStat(b); err == nil {
			counter("process_cpu_seconds_total", "Total user and system CPU time spent in seconds.", float64(st.cpuTicks)/userHZ)
			gauge("process_virtual_memory_bytes", "Virtual memory size in bytes.", float64(st.vsize))
			gauge("process_resident_memory_bytes", "Resident memory size in bytes.", float64(st.rssPages*int64(os.Getpagesize())))
			if b, err := os.ReadFile("/proc/stat"); err == nil {
				if boot, err := parseBootTime(b); err == nil {
					gauge("process_start_time_seconds", "Start time of the process since unix epoch in seconds.", float64(boot)+float64(st.startTicks)/userHZ)
				}
			}
		}
	}
	if fds, err := os.ReadDir("/proc/self/fd"); err == nil {
		gauge("process_open_fds", "Number of open file descriptors.", float64(len(fds)))
	}
	if b, err := os.ReadFile("/proc/self/limits"); err == nil {
		if v, err := parseLimit(b, "Max open files"); err == nil {
			gauge("process_max_fds", "Maximum number of open file descriptors.", v)
		}
		if v, err := parseLimit(b, "Max address space"); err == nil {
			gauge("process_virtual_memory_max_bytes", "Maximum amount of virtual memory available in bytes.", v)
		}
	}
	if b, err := os.ReadFile("/proc/self/net/dev"); err == nil {
		if rx, tx, err := parseNetDev(b); err == nil {
			counter("process_network_receive_bytes_total", "Number of bytes received by the process over the network.", float64(rx))
			counter("process_network_transmit_bytes_total", "Number of bytes sent by the process over the network.", float64(tx))
		}
	}
}
