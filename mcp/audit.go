package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"sync"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Audit bounds. The args string is bounded so one call cannot grow the
// file without limit; a token id is cut so a prefix never reads as whole.
const (
	maxAuditArgs    = 1024
	maxAuditTokenID = 64
	auditCutMark    = "…(truncated)"
	auditFileMode   = 0o600 // the record carries tool arguments
)

// Outcomes of a call in the audit file.
const (
	OutcomeOK        = "ok"
	OutcomeToolError = "tool_error"
	OutcomeRefused   = "refused"
)

// rpcIDHeader carries the JSON-RPC id from the before-call hook to the
// audit middleware (mcp-go gives middleware no id). The hook always
// overwrites it, so a client cannot forge it.
const rpcIDHeader = "X-Fieldtap-Rpc-Id"

// Audit writes one JSON line per tools/call to a file, refused calls
// included. Records are written whole, one write each, under a lock, to
// an unbuffered O_APPEND file, so concurrent calls never interleave
// halves; no fsync (a record survives the process, not a power cut).
type Audit struct {
	mu  sync.Mutex
	f   *os.File
	seq uint64
	now func() time.Time
}

// AuditRecord is one line of the audit file. Error is always present
// (null on success) so a reader never tells null from absent.
type AuditRecord struct {
	Seq       uint64      `json:"seq"`
	TS        string      `json:"ts"`
	Tool      string      `json:"tool"`
	ID        string      `json:"id"`
	Caller    AuditCaller `json:"caller"`
	Outcome   string      `json:"outcome"`
	ElapsedMS int64       `json:"elapsed_ms"`
	Args      string      `json:"args"`
	Error     *string     `json:"error"`
}

// AuditCaller is the caller as recorded; Token is absent, not blank, when
// no token was presented, so grepping "token" finds exactly those calls.
type AuditCaller struct {
	Transport string `json:"transport"`
	Peer      string `json:"peer,omitempty"`
	Token     string `json:"token,omitempty"`
}

// OpenAudit opens (creating 0600) the audit file for appending. A path
// that cannot be opened is an error at startup, not at the first call.
func OpenAudit(path string) (*Audit, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, auditFileMode)
	if err != nil {
		return nil, fmt.Errorf("mcp audit file: %w", err)
	}
	return &Audit{f: f, now: time.Now}, nil
}

// Close closes the file.
func (a *Audit) Close() error { return a.f.Close() }

// Record appends one record, numbering it. An error means the record is
// not on disk, and the caller must not answer.
func (a *Audit) Record(tool, id string, c Caller, outcome string, elapsed time.Duration, args []byte, errText string) error {
	if a == nil {
		return nil
	}
	r := AuditRecord{Tool: tool, ID: id, Outcome: outcome, ElapsedMS: elapsed.Milliseconds(), Args: boundArgs(args),
		Caller: AuditCaller{Transport: c.Transport, Peer: c.Peer, Token: auditTokenID(c.TokenID)}}
	if errText != "" {
		r.Error = &errText
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	r.Seq = a.seq + 1
	r.TS = a.now().UTC().Format("2006-01-02T15:04:05.000Z")
	b, err := json.Marshal(r) // escapes every value: crafted args cannot end the line
	if err != nil {
		return err
	}
	if _, err := a.f.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("audit record: %w", err)
	}
	a.seq = r.Seq
	return nil
}

// auditTokenID percent-encodes an id (a space, quote or newline cannot
// forge a field) and cuts it at maxAuditTokenID with a mark.
func auditTokenID(id string) string {
	e := url.PathEscape(id)
	if len(e) > maxAuditTokenID {
		return e[:maxAuditTokenID] + auditCutMark
	}
	return e
}

func boundArgs(b []byte) string {
	if len(b) > maxAuditArgs {
		return string(b[:maxAuditArgs]) + auditCutMark
	}
	return string(b)
}

// audited records every call that reaches a handler. A call whose record
// cannot be written answers AUDIT_FAILED instead of its result: no answer
// leaves the server that the file does not hold.
func audited(d Deps, a *Audit) server.ToolHandlerMiddleware {
	return func(next server.ToolHandlerFunc) server.ToolHandlerFunc {
		if a == nil {
			return next
		}
		return func(ctx context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
			start := time.Now()
			res, err := next(ctx, req)
			outcome, errText := outcomeOf(res, err)
			args, _ := json.Marshal(req.GetRawArguments())
			if werr := a.Record(req.Params.Name, req.Header.Get(rpcIDHeader), callerOf(ctx), outcome, time.Since(start), args, errText); werr != nil {
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
		return OutcomeToolError, err.Error()
	}
	if res == nil || !res.IsError {
		return OutcomeOK, ""
	}
	var f Failure
	_ = json.Unmarshal(res.RawStructuredContent, &f)
	if len(f.Errors) == 0 {
		return OutcomeToolError, "error"
	}
	e := f.Errors[0]
	if e.Code == CodeForbidden {
		return OutcomeRefused, e.Code + ": " + e.Message
	}
	return OutcomeToolError, e.Code + ": " + e.Message
}

// auditHooks stamp the JSON-RPC id for the audit middleware and record
// calls mcp-go refuses before any middleware runs (an unknown tool: the
// probing an audit exists to show).
func auditHooks(a *Audit, log func(msg string, args ...any)) *server.Hooks {
	h := &server.Hooks{}
	h.AddBeforeCallTool(func(ctx context.Context, id any, req *mcpgo.CallToolRequest) {
		req.Header = req.Header.Clone()
		if req.Header == nil {
			req.Header = map[string][]string{}
		}
		req.Header.Set(rpcIDHeader, fmt.Sprint(id))
	})
	if a == nil {
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
		if werr := a.Record(name, fmt.Sprint(id), callerOf(ctx), OutcomeRefused, 0, args, err.Error()); werr != nil {
			log("audit record not written", "tool", name, "err", werr)
		}
	})
	return h
}
