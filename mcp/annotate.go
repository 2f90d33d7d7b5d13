package mcp

import mcpgo "github.com/mark3labs/mcp-go/mcp"

// The tool hints, each with all four set explicitly: mcp-go's NewTool
// defaults destructiveHint and openWorldHint to true, and a client that
// reads a missing hint as its default would treat a reader as a writer.

// readOnly marks a tool that only reads stores.
func readOnly() mcpgo.ToolAnnotation {
	return hints(true, false, true, false)
}

// writesFile marks a tool that writes a new file on the box (an export)
// and nothing else: not read-only, never destructive (it creates, never
// overwrites), not idempotent (each call writes another file).
func writesFile() mcpgo.ToolAnnotation {
	return hints(false, false, false, false)
}

// transmits marks a tool that can put bytes on a bus: never read-only,
// never idempotent (each run is a new transmission), open-world (ECUs it
// does not control answer), and destructive when a plan it makes or runs
// can be erase-class.
func transmits(destructive bool) mcpgo.ToolAnnotation {
	return hints(false, destructive, false, true)
}

func hints(readOnly, destructive, idempotent, openWorld bool) mcpgo.ToolAnnotation {
	return mcpgo.ToolAnnotation{
		ReadOnlyHint:    mcpgo.ToBoolPtr(readOnly),
		DestructiveHint: mcpgo.ToBoolPtr(destructive),
		IdempotentHint:  mcpgo.ToBoolPtr(idempotent),
		OpenWorldHint:   mcpgo.ToBoolPtr(openWorld),
	}
}
