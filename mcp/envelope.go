package mcp

import (
	"encoding/json"

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
	// BudgetCut is present when the page was cut to fit the response
	// byte budget (budget.go): next_cursor continues after the last row
	// shown.
	BudgetCut *BudgetCut `json:"budget_cut,omitempty"`
	// keys are the pager's keys of the rows taken, in page order, so the
	// adapter can cut a page at any row and name the next one.
	keys []rowKey
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
	// Gate and Reason come with TRANSMIT_REFUSED: the gate that refused
	// and, where a gate has several reasons, which (CONFIRMATION_FORGED,
	// BUTTON_TIMEOUT, PLANS_TOKEN_FULL…), stable for a client to branch on.
	Gate   string `json:"gate,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// Envelope is the answer of an object tool (DESIGN.md §4). Data, Items and
// Page are optional in the schema because a Failure, which every tool may
// answer with, has none of them; on success they are always present.
type Envelope[T any] struct {
	OK       bool           `json:"ok"`
	Data     *T             `json:"data,omitempty"`
	Source   SourceInfo     `json:"source"`
	Coverage *coverageBlock `json:"coverage,omitempty"`
	Warnings []string       `json:"warnings"`
	Errors   []ErrorInfo    `json:"errors"`
}

// ListEnvelope is the answer of a list tool: one page of items.
type ListEnvelope[T any] struct {
	OK       bool           `json:"ok"`
	Items    []T            `json:"items,omitzero"`
	Page     *Page          `json:"page,omitempty"`
	Source   SourceInfo     `json:"source"`
	Coverage *coverageBlock `json:"coverage,omitempty"`
	Warnings []string       `json:"warnings"`
	Errors   []ErrorInfo    `json:"errors"`
}

// Failure is the answer of any tool that could not do what was asked.
type Failure struct {
	OK       bool        `json:"ok"`
	Source   SourceInfo  `json:"source"`
	Warnings []string    `json:"warnings"`
	Errors   []ErrorInfo `json:"errors"`
}

// fail answers with one error. The call still succeeds at the protocol
// level so the agent can read why and correct itself.
func fail(src SourceInfo, code, msg, hint string) *mcpgo.CallToolResult {
	return failWith(src, ErrorInfo{Code: code, Message: msg, Hint: hint})
}

// failWith answers with one error carrying extra fields, and the warnings
// gathered before it failed.
func failWith(src SourceInfo, e ErrorInfo, warnings ...string) *mcpgo.CallToolResult {
	b, err := json.Marshal(Failure{Source: src, Warnings: nonNil(warnings), Errors: []ErrorInfo{e}})
	if err != nil {
		panic(err) // a Failure is strings and numbers: it always encodes
	}
	return rendered(b, false, "")
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// rendered builds the result from envelope bytes: the envelope as text
// and, from the same bytes, as structuredContent; isError exactly when ok
// is false; the provenance note, when there is one, as the last block.
func rendered(b []byte, isOK bool, note string) *mcpgo.CallToolResult {
	content := []mcpgo.Content{mcpgo.NewTextContent(string(b))}
	if note != "" {
		content = append(content, mcpgo.NewTextContent(note))
	}
	return &mcpgo.CallToolResult{
		Content:              content,
		RawStructuredContent: json.RawMessage(b),
		IsError:              !isOK,
	}
}
