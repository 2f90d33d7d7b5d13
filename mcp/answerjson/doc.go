// Package answerjson puts a tool's answer on the wire with its text escaped
// once. mcp-go encodes a tools/call answer with encoding/json, which
// escapes the text block (the envelope, up to the response budget) and
// then re-scans the escaped copy: more CPU than the tool itself
// (docs/benchmarks.md). Append writes a tools/call answer as one
// JSON-RPC message for the stdio transport; over HTTP, Spliced (the
// server's outermost tool middleware) holds a call's text blocks back
// from mcp-go, and the writer Splice returns puts them where mcp-go
// wrote placeholders. Both share one pool of answer buffers.
//
// The tool framework (mcp) installs Spliced and the transports
// (mcp/front) write with the rest, so it imports nothing of this
// project: neither of them may import the other.
package answerjson
