// Package front is the MCP server's front door: the stdio transport
// (ServeStdio: end-of-input held back until every request is answered,
// tools/call served on long-lived workers) and the streamable-HTTP
// endpoint (HTTPEndpoint: Host, Origin and bearer-token checks, the
// session table that bounds mcp-go's, body and write deadlines, the call
// caps, the drain at shutdown), the connection caps on its listeners
// (ConnPool: per address and in all), the same door in front of the status page and
// /metrics (Protect), file downloads over HTTP GET (FileServer), and
// uploads over HTTP PUT into the upload table the MCP upload tools use
// (ServeUploads).
//
// It serves the *server.MCPServer it is given (mcp.NewServer builds it,
// the daemon wires the two) and never imports mcp: it shares with the
// tool framework only the Caller it proves (mcp/auth), the audit of what
// its limits refuse (mcp/audit), the answer writer (mcp/answerjson) and the
// call's concurrency slot (mcp/callslot). Only the stdio transport writes
// to stdout.
package front
