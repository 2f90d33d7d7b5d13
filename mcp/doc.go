// Package mcp is fieldtap's Model Context Protocol surface: the envelope
// every tool answers with, the tool registry by bundle, and the stdio and
// streamable-HTTP transports. Tools read stores in services/; this package
// never reaches drivers/ or board/.
//
// Only the stdio transport writes to stdout.
package mcp
