// Package auth is who may call the box's MCP server: the tokens file
// (id:sha256:<hex>[:scopes] lines, verified in constant time), the two
// scopes a token carries (read, transmit), and the Caller a transport
// proved, carried in a call's context from the front door to the tools
// and the audit.
//
// It is a leaf: it imports nothing of this project, so the tool
// framework (mcp), the audit (mcp/audit) and the transports (mcp/front)
// all read the same Caller.
package auth
