// Package sim is the simulated board: three ports (span0, can0, j1708) that
// replay traffic from the seeded generators beside it (sipgen, j1939gen,
// j1708gen, sharing one drive in internal/drive), paced to the generated
// timestamps so the box behaves as if it were plugged in. The generators
// live here because the product runs them; the operator CLI's
// `fieldtap gen` writes the same traffic as files. Like the rest of
// board/, they reach neither firmware/, services/ nor mcp/.
package sim
