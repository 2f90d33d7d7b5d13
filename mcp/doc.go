// Package mcp is fieldtap's Model Context Protocol server: the envelope
// every tool answers with, the tool framework (tool[In, Out] and its one
// adapter) and the tool registry by bundle; live views as resources
// rendered by the tools' own handlers, with subscriptions (resources.go,
// subscribe.go), completions (complete.go), prompts (prompts.go) and the
// server's warnings as log notifications (logging.go). Tools read stores
// in services/; this package never reaches drivers/ or board/.
//
// NewServer builds the server; the transports that serve it are
// mcp/front's, which this package never imports (the daemon wires the
// two). Beside it: mcp/auth (tokens, callers, scopes) and mcp/audit (the
// audit file and call counts), which its middleware uses, and the two
// small pieces it shares with the front door, mcp/answerjson (the answer
// text escaped once) and mcp/callslot (a call's concurrency slot).
// Nothing here writes to stdout.
package mcp
