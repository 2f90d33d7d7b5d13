package audit

import (
	"cmp"
	"slices"
	"sync"
)

// unknownTool is the tool label of calls naming no loaded tool: a
// client's misspellings, or a scan for tools, must not grow the table.
const unknownTool = "unknown"

// CallCounts counts tools/call by tool and outcome (the audit's
// outcomes), audit file or not, for the metrics endpoint. Names are
// bounded to the loaded tools plus unknownTool.
type CallCounts struct {
	mu    sync.Mutex
	known map[string]bool
	n     map[[2]string]uint64
}

// NewCallCounts returns an empty table.
func NewCallCounts() *CallCounts { return &CallCounts{n: map[[2]string]uint64{}} }

// ToolCalls is one tool's calls of one outcome.
type ToolCalls struct {
	Tool, Outcome string
	Calls         uint64
}

// Know sets the tool names counted by name: the MCP server's loaded
// tools, set once it has built them.
func (c *CallCounts) Know(names map[string]bool) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.known = names
}

// Add counts one call of tool with outcome; a tool Know did not name is
// counted as unknownTool.
func (c *CallCounts) Add(tool, outcome string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.known[tool] {
		tool = unknownTool
	}
	c.n[[2]string{tool, outcome}]++
}

// Calls lists the counts by tool, then outcome.
func (c *CallCounts) Calls() []ToolCalls {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]ToolCalls, 0, len(c.n))
	for k, n := range c.n {
		out = append(out, ToolCalls{Tool: k[0], Outcome: k[1], Calls: n})
	}
	slices.SortFunc(out, func(a, b ToolCalls) int {
		return cmp.Or(cmp.Compare(a.Tool, b.Tool), cmp.Compare(a.Outcome, b.Outcome))
	})
	return out
}
