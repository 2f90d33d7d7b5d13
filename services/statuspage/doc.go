// Package statuspage is the page a tech reads at the box: one HTML page
// written by Go code (no template engine), the JSON it is rendered from, and the bus-load charts drawn
// here as SVG (no script, no CDN). Build reads the stores through small
// interfaces and returns a Status; Handler serves it read-only. Nothing
// here can transmit, arm or change anything.
package statuspage
