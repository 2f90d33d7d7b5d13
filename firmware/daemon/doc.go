// Package daemon wires fieldtapd together, in order: capture ports (board
// and files) → bounded hand-offs → stores → the MCP endpoint. It is the only
// package that sees drivers, services and mcp at once.
package daemon
