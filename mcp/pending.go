package mcp

// Bundles not yet moved to the tool framework.
var (
	j1708Tools    []toolDef
	transmitTools []toolDef
)
