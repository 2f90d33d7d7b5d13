package auth

import (
	"context"
	"slices"
)

// Caller is who made a call, as far as the transport can prove it.
type Caller struct {
	Transport string   // "stdio", "http" (the MCP endpoint) or "http-put" (the upload route)
	Peer      string   // remote IP over HTTP; empty over stdio
	TokenID   string   // empty when no token was presented
	Scopes    []string // nil: no token scheme in force, every scope
}

type callerKey struct{}

// WithCaller is ctx carrying c: the HTTP front door sets it on every
// request it admits.
func WithCaller(ctx context.Context, c Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// CallerOf is the caller in ctx; stdio when the transport set none.
func CallerOf(ctx context.Context) Caller {
	if c, found := ctx.Value(callerKey{}).(Caller); found {
		return c
	}
	return Caller{Transport: "stdio"}
}

// May reports whether c holds scope. Without a token scheme (stdio, or
// loopback HTTP with no tokens file) every scope is held: the caller is
// on this box, and transmit keeps its own gates.
func (c Caller) May(scope string) bool {
	return c.Scopes == nil || slices.Contains(c.Scopes, scope)
}
