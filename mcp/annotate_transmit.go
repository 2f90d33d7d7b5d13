package mcp

import mcpgo "github.com/mark3labs/mcp-go/mcp"

// transmits marks a tool that can put bytes on a bus: never read-only,
// never idempotent (each run is a new transmission), open-world (ECUs it
// does not control answer), and destructive when a plan it makes or runs
// can be erase-class. All four hints are set explicitly.
func transmits(destructive bool) mcpgo.ToolOption {
	return mcpgo.WithToolAnnotation(mcpgo.ToolAnnotation{
		ReadOnlyHint:    mcpgo.ToBoolPtr(false),
		DestructiveHint: mcpgo.ToBoolPtr(destructive),
		IdempotentHint:  mcpgo.ToBoolPtr(false),
		OpenWorldHint:   mcpgo.ToBoolPtr(true),
	})
}
