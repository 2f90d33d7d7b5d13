// Package coverage says what an answer did not see. Given what the answer
// read (families of captured data, ports, a window) and the box's own
// counters (each port's state and losses over time, each store's
// evictions and the oldest time it holds, traffic the decoders skipped,
// analyser suspensions), Build reports whether the window is whole and,
// for each way it is not, a warning with how much is missing, which
// window the answer does cover, and what to do. The MCP framework
// attaches it to every answer of every tool that reads captured data
// (DESIGN.md §10), so no tool reports coverage by itself.
package coverage
