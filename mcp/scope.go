package mcp

import (
	"context"
	"fmt"
	"strings"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"fieldtap/mcp/auth"
)

// requiredScope is what a tool needs: transmit for anything not
// read-only, decided by its annotation so no list of names can drift.
func requiredScope(t mcpgo.Tool) string {
	if ro := t.Annotations.ReadOnlyHint; ro != nil && *ro || readScopeWrites[t.Name] {
		return auth.ScopeRead
	}
	return auth.ScopeTransmit
}

// readScopeWrites are the tools that change the box's state but no bus
// and no file a caller reads back as data: a read token may call them.
// A mark only annotates the timeline (docs/marks.md).
var readScopeWrites = map[string]bool{toolMark: true}

// scoped refuses a call whose caller lacks the tool's scope, before the
// tool runs.
func scoped(d Deps, tools map[string]mcpgo.Tool) server.ToolHandlerMiddleware {
	return func(next server.ToolHandlerFunc) server.ToolHandlerFunc {
		return func(ctx context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
			need := requiredScope(tools[req.Params.Name])
			if c := auth.CallerOf(ctx); !c.May(need) {
				return fail(d.Source(), CodeForbidden, fmt.Sprintf("tool %s needs the %s scope; token %s has %s", req.Params.Name, need, c.TokenID, strings.Join(c.Scopes, ",")),
					"use a token with that scope (see docs/mcp-protocol.md)"), nil
			}
			return next(ctx, req)
		}
	}
}
