// Package metrics is the box's Prometheus endpoint: one collector that
// reads the ports, stores, transmitter and exporters at scrape time (no
// second set of counters to drift), a counting decorator for the
// transmit audit record, and the Go runtime and process collectors, on a
// registry of its own. Names follow the Prometheus conventions:
// fieldtap_ prefix, _total for counters, base units (bytes, ratios).
package metrics
