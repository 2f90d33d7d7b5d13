// Package mcp is fieldtap's Model Context Protocol surface: the envelope
// every tool answers with, the tool registry by bundle, and the stdio and
// streamable-HTTP transports; live views as resources rendered by the
// tools' own handlers, with subscriptions (resources.go, subscribe.go),
// completions (complete.go), prompts (prompts.go) and the server's
// warnings as log notifications (logging.go). Tools read stores in services/; this package
// never reaches drivers/ or board/.
//
// Only the stdio transport writes to stdout.
package mcp
