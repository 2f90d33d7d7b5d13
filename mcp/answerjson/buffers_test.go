package answerjson_test

import (
	"testing"

	"fieldtap/mcp"
	"fieldtap/mcp/answerjson"
)

// TestPoolBoundIsTwiceTheDefaultBudget: the pool keeps the buffers of
// answers up to twice the default response budget, which this package
// cannot name without importing mcp.
func TestPoolBoundIsTwiceTheDefaultBudget(t *testing.T) {
	if answerjson.MaxPooled != 2*mcp.DefaultMaxResponseBytes {
		t.Errorf("pooled answers up to %d bytes, want twice mcp.DefaultMaxResponseBytes (%d)", answerjson.MaxPooled, 2*mcp.DefaultMaxResponseBytes)
	}
}
