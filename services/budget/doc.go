// Package budget divides the box's memory budget among its stores and
// checks that what the configuration asks for fits.
//
// The budget is the board's RAM share for fieldtapd (the board profile's
// memory_budget_mib, or memory_limit_mib from the configuration), which is
// also the Go runtime's soft memory limit. 60 % of it is left to the
// runtime, the MCP server's answers and the collector's headroom: the
// collector runs once per (limit − live heap) bytes allocated, so a heap
// whose live part nears its limit runs it back to back. The other 40 %
// (StoreFraction) is the store pool. Fixed costs (an AF_PACKET kernel
// ring, a hand-off's buffers, a bound the operator set explicitly) come
// off the pool first; every other store gets a share of what is left by
// weight, so each store's bound is derived from the one budget and the
// bounds never sum past it. A configuration whose fixed costs alone pass
// the pool is refused, naming each figure.
package budget
