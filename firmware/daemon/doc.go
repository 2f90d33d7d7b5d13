// Package daemon wires fieldtapd together: capture ports (board and
// files) → bounded hand-offs → stores → the MCP endpoint. Run brings the
// box up as a list of named stages and stops them in reverse (stages.go).
// It is the only package that sees drivers, services and mcp at once.
package daemon
