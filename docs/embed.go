// Package docs carries the operator pages the MCP server offers as
// reference resources, embedded so the box serves the pages of its own
// build.
package docs

import _ "embed"

// Filter is the filter language (filter.md).
//
//go:embed filter.md
var Filter string

// Tools is the MCP tool reference (mcp-tools.md).
//
//go:embed mcp-tools.md
var Tools string

// TransmitSafety is the transmit safety model (transmit-safety.md).
//
//go:embed transmit-safety.md
var TransmitSafety string
