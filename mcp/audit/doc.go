// Package audit is the record of every MCP tools/call: the audit file
// (one JSON line a call, refused calls included, numbered by seq; a flood
// of refusals coalesced into counted records; rotated at a byte quota;
// every record whole or absent, a lost one leaving a gap), and the call
// counts by tool and outcome that the metrics endpoint reads, audit file
// or not (docs/mcp-protocol.md, "Audit file").
//
// The tool framework (mcp) records the calls that reach a tool; the HTTP
// front door (mcp/front) records the calls its limits refuse. It imports
// mcp/auth for the Caller it records and never imports mcp or mcp/front.
package audit
