//go:build !linux

package mcp

import "time"

// processCPU is not measured off Linux: benchmarks then report wall time only.
func processCPU() (time.Duration, bool) { return 0, false }
