package mcp

import (
	"context"
	"fmt"
	"strconv"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"fieldtap/services/filter"
	"fieldtap/services/sip"
)

type listDialogsIn struct {
	Filter string `json:"filter,omitempty" jsonschema:"filter expression, see docs/filter.md, e.g. method == INVITE and final_code >= 400"`
	Limit  int    `json:"limit,omitempty" jsonschema:"rows per page, default 50, at most 1000"`
	Cursor string `json:"cursor,omitempty" jsonschema:"next_cursor of the previous page"`
	Projection
}

type getDialogIn struct {
	CallID string `json:"call_id" jsonschema:"the Call-ID, exactly as list_dialogs returned it"`
	Cursor string `json:"cursor,omitempty" jsonschema:"next_cursor of the previous page of messages"`
}

type messageRow struct {
	Index          int    `json:"index"`
	Time           string `json:"time"`
	Src            string `json:"src"`
	Dst            string `json:"dst"`
	Transport      string `json:"transport"`
	Request        bool   `json:"request"`
	Method         string `json:"method"`
	StatusCode     int    `json:"status_code,omitempty"`
	CSeq           uint32 `json:"cseq"`
	Retransmission bool   `json:"retransmission"`
	Summary        string `json:"summary" untrusted:"true"` // the start line
	Evicted        bool   `json:"evicted,omitempty"`        // raw bytes no longer kept
}

type getDialogOut struct {
	Dialog   dialogRow    `json:"dialog"`
	Messages []messageRow `json:"messages"`
	Page     Page         `json:"messages_page"`
}

type getMessageIn struct {
	CallID string `json:"call_id" jsonschema:"the Call-ID"`
	Index  int    `json:"index" jsonschema:"message index in the dialog, from 0 (get_dialog lists them)"`
}

type headerOut struct {
	Name  string `json:"name"`
	Value string `json:"value" untrusted:"true"`
}

type getMessageOut struct {
	Message   messageRow  `json:"message"`
	StartLine string      `json:"start_line" untrusted:"true"`
	Headers   []headerOut `json:"headers"`
	Body      string      `json:"body" untrusted:"body"`
	BodyShort bool        `json:"body_short"` // Content-Length promised more than was captured
}

type validateFilterIn struct {
	Filter string `json:"filter" jsonschema:"the filter expression to check"`
}

type filterField struct {
	Name string `json:"name"`
	Type string `json:"type"`
	Many bool   `json:"any_of"` // compares true when any value matches
	Doc  string `json:"doc"`
}

type validateFilterOut struct {
	Valid   bool          `json:"valid"`
	Column  int           `json:"column,omitempty"`
	Message string        `json:"message,omitempty"`
	Pointer string        `json:"pointer,omitempty"`
	Fields  []filterField `json:"fields"`
}

func newMessageRow(m *sip.Message) messageRow {
	return messageRow{Index: m.Index, Time: ts(m.Time), Src: m.Src.String(), Dst: m.Dst.String(), Transport: m.Transport,
		Request: m.Request, Method: m.Method, StatusCode: m.StatusCode, CSeq: m.CSeq, Retransmission: m.Retransmission,
		Summary: startLine(m.Raw)}
}

func startLine(raw []byte) string {
	for i, c := range raw {
		if c == '\r' || c == '\n' {
			return string(raw[:i])
		}
	}
	return string(raw)
}

func lookupDialog(d Deps, sn *sip.Snapshot, callID string) (*sip.Dialog, *mcpgo.CallToolResult) {
	dl := sn.Lookup(callID)
	if dl == nil {
		return nil, fail(d.Source(), codeSIPNotFound, fmt.Sprintf("no dialog with Call-ID %q", callID), "list_dialogs shows the Call-IDs kept; an old one may have been evicted (get_capture_report)")
	}
	return dl, nil
}

func sipDialogTools(d Deps) []server.ServerTool {
	return []server.ServerTool{
		{
			Tool: mcpgo.NewTool(toolListDialogs,
				mcpgo.WithDescription("SIP dialogs (one per Call-ID, REGISTER and OPTIONS included), oldest first, filtered with the filter language; paged: follow next_cursor. total_matched counts every match."),
				inputSchema[listDialogsIn](), readOnly(), listOutput[dialogRow]()),
			Handler: listHandler[listDialogsIn, dialogRow](d, []string{"call_id"}, func(ctx context.Context, in listDialogsIn) *mcpgo.CallToolResult {
				src := d.Source()
				sn, f := sipSnapshot(d)
				if f != nil {
					return f
				}
				limit, err := sipLimit(in.Limit, sipDefaultLimit, sipMaxLimit)
				if err != nil {
					return fail(src, CodeInvalidArgument, err.Error(), "use a smaller page and follow next_cursor")
				}
				e, f := compileFilter(d, in.Filter)
				if f != nil {
					return f
				}
				ds, page, err := pageDialogs(src, sn.Dialogs, func(dl *sip.Dialog) bool { return e.Match(dl) }, in.Cursor, limit)
				if err != nil {
					return fail(src, CodeInvalidArgument, err.Error(), "start again without a cursor")
				}
				rows := make([]dialogRow, len(ds))
				for i, dl := range ds {
					rows[i] = newDialogRow(dl)
				}
				return list(src, rows, page)
			}),
		},
		{
			Tool: mcpgo.NewTool(toolGetDialog,
				mcpgo.WithDescription("One dialog by Call-ID: its summary and its messages in order (start lines; 100 per page, follow messages_page.next_cursor). get_message returns one message's headers and body."),
				inputSchema[getDialogIn](), readOnly(), outputSchema[getDialogOut]()),
			Handler: handler(d, func(ctx context.Context, in getDialogIn) *mcpgo.CallToolResult {
				src := d.Source()
				sn, f := sipSnapshot(d)
				if f != nil {
					return f
				}
				dl, f := lookupDialog(d, sn, in.CallID)
				if f != nil {
					return f
				}
				start := 0
				if in.Cursor != "" {
					n, err := strconv.Atoi(in.Cursor)
					if err != nil || n < 0 {
						return fail(src, CodeInvalidArgument, "cursor is not one get_dialog issued", "start again without a cursor")
					}
					start = n
				}
				seqs := dl.Messages()
				out := getDialogOut{Dialog: newDialogRow(dl), Messages: []messageRow{}}
				end := min(start+sipMessagesPageSize, len(seqs))
				for _, seq := range seqs[min(start, len(seqs)):end] {
					if m, ok := sn.Message(seq); ok {
						out.Messages = append(out.Messages, newMessageRow(m))
					} else {
						out.Messages = append(out.Messages, messageRow{Index: -1, Evicted: true})
					}
				}
				out.Page = Page{Returned: len(out.Messages), TotalMatched: len(seqs)}
				if end < len(seqs) {
					// Zero-padded so cursors compare as text in index order.
					out.Page.Truncated, out.Page.NextCursor = true, fmt.Sprintf("%06d", end)
				}
				var warn []string
				if dl.MessagesShed > 0 {
					warn = append(warn, fmt.Sprintf("%d messages past the per-dialog cap were counted but not kept", dl.MessagesShed))
				}
				return ok(src, out, warn...)
			}),
		},
		{
			Tool: mcpgo.NewTool(toolGetMessage,
				mcpgo.WithDescription("One SIP message of a dialog by index: start line, every header (unfolded, in order) and the body."),
				inputSchema[getMessageIn](), readOnly(), outputSchema[getMessageOut]()),
			Handler: handler(d, func(ctx context.Context, in getMessageIn) *mcpgo.CallToolResult {
				src := d.Source()
				sn, f := sipSnapshot(d)
				if f != nil {
					return f
				}
				dl, f := lookupDialog(d, sn, in.CallID)
				if f != nil {
					return f
				}
				seqs := dl.Messages()
				if in.Index < 0 || in.Index >= len(seqs) {
					return fail(src, codeSIPNotFound, fmt.Sprintf("index %d: the dialog keeps messages 0..%d", in.Index, len(seqs)-1), "get_dialog lists the messages")
				}
				m, found := sn.Message(seqs[in.Index])
				if !found {
					return fail(src, codeSIPNotFound, "the message's bytes were evicted by the store's byte bound", "get_capture_report shows what the caps shed")
				}
				var p sip.Parsed
				if err := p.Parse(m.Raw); err != nil {
					return fail(src, CodeInternal, "stored message no longer parses: "+err.Error(), "report this as a bug")
				}
				out := getMessageOut{Message: newMessageRow(m), StartLine: startLine(m.Raw), Headers: []headerOut{}, Body: string(p.Body), BodyShort: p.BodyShort}
				for _, h := range p.Headers {
					out.Headers = append(out.Headers, headerOut{Name: string(h.Name), Value: string(sip.Unfold(h.Value))})
				}
				return ok(src, out)
			}),
		},
		{
			Tool: mcpgo.NewTool(toolValidateFilter,
				mcpgo.WithDescription("Check a filter expression without running it: valid, or the column and reason of the first error with a caret line. Always lists the fields a filter may use."),
				inputSchema[validateFilterIn](), readOnly(), outputSchema[validateFilterOut]()),
			Handler: handler(d, func(ctx context.Context, in validateFilterIn) *mcpgo.CallToolResult {
				out := validateFilterOut{Valid: true}
				for _, f := range sip.Schema {
					out.Fields = append(out.Fields, filterField{Name: f.Name, Type: f.Kind.String(), Many: f.Multi, Doc: f.Doc})
				}
				if _, err := sip.Compile(in.Filter); err != nil {
					out.Valid, out.Message = false, err.Error()
					if fe, ok := err.(*filter.Error); ok {
						out.Column, out.Pointer, out.Message = fe.Col, fe.Pointer(), fe.Msg
					}
				}
				return ok(d.Source(), out)
			}),
		},
	}
}
