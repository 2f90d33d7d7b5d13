package mcp

import (
	"encoding/json"
	"fmt"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
)

// SourceInfo says which capture an answer came from and whether it can
// still change.
type SourceInfo struct {
	CaptureIdentity string `json:"capture_identity"`
	Live            bool   `json:"live"`
	SourceExhausted bool   `json:"source_exhausted"`
}

// Page describes one page of a list answer. A short page says it is short.
type Page struct {
	Returned     int    `json:"returned"`
	TotalMatched int    `json:"total_matched"`
	Truncated    bool   `json:"truncated"`
	NextCursor   string `json:"next_cursor"`
}

// ErrorInfo is one error in an envelope: a stable code, what happened, and
// what to do about it.
type ErrorInfo struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Hint    string `json:"hint"`
	// SizeBytes and MaxBytes come with RESPONSE_TOO_LARGE so a client can
	// size its next request.
	SizeBytes int `json:"size_bytes,omitempty"`
	MaxBytes  int `json:"max_bytes,omitempty"`
}

// Error codes.
const (
	CodeInvalidArgument  = "INVALID_ARGUMENT"
	CodeInternal         = "INTERNAL"
	CodeResponseTooLarge = "RESPONSE_TOO_LARGE"
	CodeForbidden        = "FORBIDDEN"
	CodeAuditFailed      = "AUDIT_FAILED"
)

// Envelope is the answer of an object tool (DESIGN.md §4). Data, Items and
// Page are optional in the schema because a Failure, which every tool may
// answer with, has none of them; on success they are always present.
type Envelope[T any] struct {
	OK       bool        `json:"ok"`
	Data     *T          `json:"data,omitempty"`
	Source   SourceInfo  `json:"source"`
	Warnings []string    `json:"warnings"`
	Errors   []ErrorInfo `json:"errors"`
}

// ListEnvelope is the answer of a list tool: one page of items.
type ListEnvelope[T any] struct {
	OK       bool        `json:"ok"`
	Items    []T         `json:"items,omitzero"`
	Page     *Page       `json:"page,omitempty"`
	Source   SourceInfo  `json:"source"`
	Warnings []string    `json:"warnings"`
	Errors   []ErrorInfo `json:"errors"`
}

// Failure is the answer of any tool that could not do what was asked.
type Failure struct {
	OK       bool        `json:"ok"`
	Source   SourceInfo  `json:"source"`
	Warnings []string    `json:"warnings"`
	Errors   []ErrorInfo `json:"errors"`
}

// ok answers with one object. Fields tagged `untrusted:"…"` anywhere in
// data are fenced (fence.go), and then the provenance note is appended.
func ok[T any](src SourceInfo, data T, warnings ...string) *mcpgo.CallToolResult {
	data, fenced := fenceTagged(data)
	return result(Envelope[T]{OK: true, Data: &data, Source: src, Warnings: nonNil(warnings), Errors: []ErrorInfo{}}, true, fenced)
}

// list answers with one page of items, fenced as ok does.
func list[T any](src SourceInfo, items []T, page Page, warnings ...string) *mcpgo.CallToolResult {
	items, fenced := fenceTagged(items)
	return result(ListEnvelope[T]{OK: true, Items: nonNil(items), Page: &page, Source: src, Warnings: nonNil(warnings), Errors: []ErrorInfo{}}, true, fenced)
}

// fail answers with one error. The call still succeeds at the protocol
// level so the agent can read why and correct itself.
func fail(src SourceInfo, code, msg, hint string) *mcpgo.CallToolResult {
	return failWith(src, ErrorInfo{Code: code, Message: msg, Hint: hint})
}

// failWith answers with one error carrying extra fields.
func failWith(src SourceInfo, e ErrorInfo) *mcpgo.CallToolResult {
	return result(Failure{Source: src, Warnings: []string{}, Errors: []ErrorInfo{e}}, false, false)
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// result renders an envelope as text and structuredContent from the same
// bytes, with isError set exactly when ok is false, and the provenance
// note as the last block when the envelope carries fenced text.
func result(e any, isOK, fenced bool) *mcpgo.CallToolResult {
	b, err := json.Marshal(e)
	if err != nil {
		// Only a programming error (an unmarshalable type) gets here.
		b = fmt.Appendf(nil, `{"ok":false,"source":{"capture_identity":"","live":false,"source_exhausted":false},"warnings":[],"errors":[{"code":%q,"message":%q,"hint":"report this as a bug"}]}`,
			CodeInternal, "encode answer: "+err.Error())
		isOK = false
	}
	return rendered(b, isOK, fenced)
}

// rendered builds the result from envelope bytes; projection and the
// budget re-render through it so every answer keeps one shape.
func rendered(b []byte, isOK, fenced bool) *mcpgo.CallToolResult {
	content := []mcpgo.Content{mcpgo.NewTextContent(string(b))}
	if fenced {
		content = append(content, mcpgo.NewTextContent(provenanceNote))
	}
	return &mcpgo.CallToolResult{
		Content:              content,
		RawStructuredContent: json.RawMessage(b),
		IsError:              !isOK,
	}
}

// hasProvenance reports whether r ends with the provenance note.
func hasProvenance(r *mcpgo.CallToolResult) bool {
	if len(r.Content) < 2 {
		return false
	}
	t, isText := r.Content[len(r.Content)-1].(mcpgo.TextContent)
	return isText && t.Text == provenanceNote
}
