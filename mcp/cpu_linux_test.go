//go:build linux

package mcp

import (
	"syscall"
	"time"
)

// processCPU is the process's user+sys CPU time: benchmarks report it
// beside wall time, which a shared machine makes noisy.
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
