// Package sim is the simulated board: three ports (span0, can0, j1708) that
// replay traffic from the seeded generators in tools/gen, paced to the
// generated timestamps so the box behaves as if it were plugged in.
package sim
