package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"fieldtap/mcp/audit"
	"fieldtap/mcp/auth"
)

// rpcIDHeader carries the JSON-RPC id from the before-call hook to the
// audit middleware (mcp-go gives middleware no id). The hook always
// overwrites it, so a client cannot forge it.
const rpcIDHeader = "X-Fieldtap-Rpc-Id"

// audited records every call that reaches a handler. A call that did
// work and whose record cannot be written answers AUDIT_FAILED instead of
// its result: no answer leaves the server that the file does not hold. A
// refusal is answered anyway (it carries no data, and a full disk must
// not turn every refusal into a different error); its record's loss
// shows as a gap. A call whose context ended before it returned (its
// client left, or the server shut down) is recorded as cancelled.
func audited(d Deps, a *audit.Log, counts *audit.CallCounts) server.ToolHandlerMiddleware {
	return func(next server.ToolHandlerFunc) server.ToolHandlerFunc {
		if a == nil && counts == nil {
			return next
		}
		return func(ctx context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
			start := time.Now()
			ctx, note := withAuditNote(ctx)
			res, err := next(ctx, req)
			outcome, errText := outcomeOf(res, err)
			if ctx.Err() != nil {
				outcome, errText = audit.OutcomeCancelled, context.Cause(ctx).Error()
			}
			counts.Add(req.Params.Name, outcome)
			if a == nil {
				return res, err
			}
			args, _ := json.Marshal(req.GetRawArguments())
			if werr := a.RecordTransmit(req.Params.Name, req.Header.Get(rpcIDHeader), auth.CallerOf(ctx), outcome, time.Since(start), args, errText, note.transmitNote()); werr != nil {
				if outcome == audit.OutcomeRefused {
					d.Log.Warn("audit record of a refused call not written; refusal answered", "tool", req.Params.Name, "err", werr)
					return res, err
				}
				d.Log.Error("audit record not written; call refused", "tool", req.Params.Name, "err", werr)
				return fail(d.Source(), CodeAuditFailed, "the audit record of this call could not be written, so its answer is withheld", "tell the operator: the audit file is not writable"), nil
			}
			return res, err
		}
	}
}

// outcomeOf classifies an answer: refused when turned away before work
// (scope), tool_error for any other isError, ok otherwise.
func outcomeOf(res *mcpgo.CallToolResult, err error) (string, string) {
	if err != nil {
		return audit.OutcomeToolError, err.Error()
	}
	if res == nil || !res.IsError {
		return audit.OutcomeOK, ""
	}
	var f Failure
	_ = json.Unmarshal(res.RawStructuredContent, &f)
	if len(f.Errors) == 0 {
		return audit.OutcomeToolError, "error"
	}
	e := f.Errors[0]
	if e.Code == CodeForbidden {
		return audit.OutcomeRefused, e.Code + ": " + e.Message
	}
	return audit.OutcomeToolError, e.Code + ": " + e.Message
}

// auditHooks stamp the JSON-RPC id for the audit middleware and record
// calls mcp-go refuses before any middleware runs (an unknown tool: the
// probing an audit exists to show).
func auditHooks(a *audit.Log, counts *audit.CallCounts, log func(msg string, args ...any)) *server.Hooks {
	h := &server.Hooks{}
	h.AddBeforeCallTool(func(ctx context.Context, id any, req *mcpgo.CallToolRequest) {
		req.Header = req.Header.Clone()
		if req.Header == nil {
			req.Header = map[string][]string{}
		}
		req.Header.Set(rpcIDHeader, fmt.Sprint(id))
	})
	if a == nil && counts == nil {
		return h
	}
	h.AddOnError(func(ctx context.Context, id any, method mcpgo.MCPMethod, message any, err error) {
		if method != mcpgo.MethodToolsCall {
			return
		}
		var name string
		var args []byte
		if req, isCall := message.(*mcpgo.CallToolRequest); isCall {
			name = req.Params.Name
			args, _ = json.Marshal(req.GetRawArguments())
		}
		counts.Add(name, audit.OutcomeRefused)
		if a == nil {
			return
		}
		if werr := a.Record(name, fmt.Sprint(id), auth.CallerOf(ctx), audit.OutcomeRefused, 0, args, err.Error()); werr != nil {
			log("audit record not written", "tool", name, "err", werr)
		}
	})
	return h
}
