package mcp

import mcpgo "github.com/mark3labs/mcp-go/mcp"

// readOnly marks a tool that only reads stores: all four hints set
// explicitly, because mcp-go's NewTool defaults destructiveHint and
// openWorldHint to true.
func readOnly() mcpgo.ToolOption {
	return mcpgo.WithToolAnnotation(mcpgo.ToolAnnotation{
		ReadOnlyHint:    mcpgo.ToBoolPtr(true),
		DestructiveHint: mcpgo.ToBoolPtr(false),
		IdempotentHint:  mcpgo.ToBoolPtr(true),
		OpenWorldHint:   mcpgo.ToBoolPtr(false),
	})
}
