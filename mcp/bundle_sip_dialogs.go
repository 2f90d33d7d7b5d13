package mcp

import (
	"errors"
	"fmt"
	"hash/fnv"

	"github.com/google/jsonschema-go/jsonschema"

	"fieldtap/mcp/untrusted"
	"fieldtap/services/filter"
	"fieldtap/services/sip"
	"fieldtap/services/srtp"
)

type listDialogsIn struct {
	Filter filterArg `json:"filter,omitempty"`
	Paging
	Projection
}

var listDialogs = tool[listDialogsIn, page[dialogRow]]{
	name:  "list_dialogs",
	reads: readsSIP,
	desc:  "SIP dialogs (one per Call-ID), oldest first, filtered (docs/filter.md); page.total_matched counts every match. Paged.",
	hints: readOnly(),
	ids:   []string{"call_id"},
	text:  []textSource{textSIP},
	run: func(c *call, in listDialogsIn) (page[dialogRow], error) {
		sn := c.d.SIP.Snapshot()
		e, err := in.Filter.compile()
		if err != nil {
			return page[dialogRow]{}, err
		}
		return pageDialogs(c, in.Paging, sn, e, 0, dialogRowOf)
	},
}

type getDialogIn struct {
	CallID callIDArg `json:"call_id"`
	Paging
}

type getDialogOut struct {
	Dialog   dialogRow    `json:"dialog"`
	Messages []messageRow `json:"messages" jsonschema:"the dialog's kept messages in capture order, limit per call"`
	Page     Page         `json:"messages_page" jsonschema:"the page of messages: follow next_cursor for the rest"`
	// Transactions are all kept (a dialog keeps at most
	// Limits.TransactionsPerDialog), never paged.
	Transactions []transactionRow `json:"transaction_list" jsonschema:"the dialog's kept transactions in order of their first message (dialog.transactions_shed counts the rest)"`
}

// transactionRow is one transaction of a dialog. The branch is an
// identifier (bare); the reason phrase is sender text.
type transactionRow struct {
	Method      string          `json:"method"`
	Branch      string          `json:"branch" jsonschema:"top Via branch (first 64 bytes)"`
	CSeq        uint32          `json:"cseq"`
	InDialog    bool            `json:"in_dialog" jsonschema:"the request carried a To tag (a re-INVITE, an in-dialog request)"`
	Src         string          `json:"src" jsonschema:"the requester"`
	Dst         string          `json:"dst"`
	Start       string          `json:"start"`
	FinalCode   *int            `json:"final_code" jsonschema:"the first final response; null while none"`
	FinalReason *untrusted.Text `json:"final_reason"`
	RingMs      *float64        `json:"ring_ms" jsonschema:"start to the first 180/183; null without one"`
	FinalMs     *float64        `json:"final_ms" jsonschema:"start to the final response; null without one"`
	Requests    int             `json:"requests" jsonschema:"the request and its retransmissions"`
	Responses   int             `json:"responses"`
}

func transactionRowOf(tx *sip.Transaction) transactionRow {
	r := transactionRow{Method: tx.Method, Branch: tx.Branch, CSeq: tx.CSeq, InDialog: tx.InDialog, Src: tx.Src.String(), Dst: tx.Dst.String(),
		Start: ts(tx.Start), FinalCode: finalCode(tx.FinalCode), Requests: tx.Requests, Responses: tx.Responses}
	if !tx.RingAt.IsZero() {
		r.RingMs = ms(tx.RingAt.Sub(tx.Start), true)
	}
	if tx.FinalCode != 0 {
		reason := untrusted.Text(tx.FinalReason)
		r.FinalReason, r.FinalMs = &reason, ms(tx.FinalAt.Sub(tx.Start), true)
	}
	return r
}

// dialogKey binds a get_dialog cursor to its dialog: the key's second
// half is a hash of the Call-ID, so a cursor handed to another dialog is
// refused rather than read as a position in it.
func dialogKey(callID string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(callID))
	return h.Sum64()
}

var getDialog = tool[getDialogIn, getDialogOut]{
	name:  "get_dialog",
	reads: readsSIP,
	desc:  "One dialog by Call-ID: its row, its transactions, and its messages in capture order, limit per call (messages_page.next_cursor for more). get_message gives headers and body.",
	hints: readOnly(),
	text:  []textSource{textSIP},
	run: func(c *call, in getDialogIn) (getDialogOut, error) {
		sn := c.d.SIP.Snapshot()
		dl, err := lookupDialog(sn, in.CallID)
		if err != nil {
			return getDialogOut{}, err
		}
		pg, err := newPager(c, in.Paging)
		if err != nil {
			return getDialogOut{}, err
		}
		h := dialogKey(dl.CallID)
		if pg.resumed && pg.from[1] != h {
			return getDialogOut{}, failErr(CodeStaleCursor, "cursor was issued by get_dialog for another Call-ID", "call get_dialog again without a cursor")
		}
		out := getDialogOut{Dialog: dialogRowOf(dl), Messages: []messageRow{}, Transactions: make([]transactionRow, 0, len(dl.Txns))}
		for i := range dl.Txns {
			out.Transactions = append(out.Transactions, transactionRowOf(&dl.Txns[i]))
		}
		for i, seq := range dl.Messages() {
			if !pg.offer(rowKey{uint64(i), h}) {
				continue
			}
			if m, kept := sn.Message(seq); kept {
				out.Messages = append(out.Messages, messageRowOf(m))
			} else {
				out.Messages = append(out.Messages, messageRow{Index: i, Evicted: true})
			}
		}
		out.Page = pg.page()
		if dl.MessagesShed > 0 {
			c.warnf("%d messages past the per-dialog cap of %d were counted but not kept", dl.MessagesShed, c.d.SIP.Limits().MessagesPerDialog)
		}
		return out, nil
	},
}

// messageIndexArg is a message's position among its dialog's kept
// messages; a dialog keeps at most sip.DefaultMessagesPerDialog.
type messageIndexArg int

func (messageIndexArg) argSchema() *jsonschema.Schema {
	return intSchema(fmt.Sprintf("message index, 0 to %d (get_dialog lists them)", sip.DefaultMessagesPerDialog-1), 0, sip.DefaultMessagesPerDialog-1)
}

type getMessageIn struct {
	CallID callIDArg       `json:"call_id"`
	Index  messageIndexArg `json:"index"`
}

type headerRow struct {
	Name  string         `json:"name" jsonschema:"as written (compact forms kept); a token the parser checked"`
	Value untrusted.Text `json:"value" jsonschema:"unfolded to one line"`
}

type getMessageOut struct {
	Message   messageRow     `json:"message"`
	Headers   []headerRow    `json:"headers" jsonschema:"every header in order"`
	Body      untrusted.Body `json:"body" jsonschema:"SDES keys (a=crypto inline:) shown as REDACTED"`
	BodyShort bool           `json:"body_short" jsonschema:"Content-Length promised more than was captured"`
	// KeysRedacted counts the inline SRTP keys masked in the body: key
	// material never leaves the box in an answer.
	KeysRedacted int `json:"keys_redacted" jsonschema:"SRTP inline keys masked in body (RFC 4568 a=crypto)"`
}

var getMessage = tool[getMessageIn, getMessageOut]{
	name:  "get_message",
	reads: readsSIP,
	desc:  "One message of a dialog by index: its row, every header in order (unfolded) and the body.",
	hints: readOnly(),
	text:  []textSource{textSIP},
	run: func(c *call, in getMessageIn) (getMessageOut, error) {
		sn := c.d.SIP.Snapshot()
		dl, err := lookupDialog(sn, in.CallID)
		if err != nil {
			return getMessageOut{}, err
		}
		seqs := dl.Messages()
		if int(in.Index) >= len(seqs) {
			return getMessageOut{}, notFound("get_dialog lists the messages", "index %d: the dialog keeps messages 0 to %d", in.Index, len(seqs)-1)
		}
		m, kept := sn.Message(seqs[in.Index])
		if !kept {
			return getMessageOut{}, notFound("get_capture_report counts what the store's bounds evicted", "message %d's bytes were evicted by the store's byte bound", in.Index)
		}
		var p sip.Parsed
		if err := p.Parse(m.Raw); err != nil {
			return getMessageOut{}, fmt.Errorf("stored message %d of %q no longer parses: %w", in.Index, dl.CallID, err)
		}
		body, keys := srtp.Redact(p.Body)
		out := getMessageOut{Message: messageRowOf(m), Headers: make([]headerRow, 0, len(p.Headers)), Body: untrusted.Body(body), BodyShort: p.BodyShort,
			KeysRedacted: keys}
		for _, h := range p.Headers {
			out.Headers = append(out.Headers, headerRow{Name: string(h.Name), Value: untrusted.Text(sip.Unfold(h.Value))})
		}
		return out, nil
	},
}

type validateFilterIn struct {
	Filter filterArg `json:"filter"`
}

type filterField struct {
	Name string `json:"name"`
	Type string `json:"type" jsonschema:"string, number or bool"`
	Many bool   `json:"any_of" jsonschema:"multi-valued: a comparison matches when any value does"`
	Doc  string `json:"doc"`
}

type validateFilterOut struct {
	Valid bool `json:"valid"`
	// Column, Message and Pointer locate the first error; null when valid.
	Column  *int          `json:"column" jsonschema:"1-based byte column of the first error; null when valid"`
	Message *string       `json:"message" jsonschema:"what is wrong there; null when valid"`
	Pointer *string       `json:"pointer" jsonschema:"the filter with a caret under the column; null when valid"`
	Fields  []filterField `json:"fields" jsonschema:"every field a filter may use"`
}

var validateFilter = tool[validateFilterIn, validateFilterOut]{
	name:  "validate_filter",
	reads: readsNothing,
	desc:  "Check a filter without running it: valid, or the first error's column with a caret line; lists the fields a filter may use.",
	hints: readOnly(),
	run: func(c *call, in validateFilterIn) (validateFilterOut, error) {
		out := validateFilterOut{Valid: true, Fields: make([]filterField, 0, len(sip.Schema))}
		for _, f := range sip.Schema {
			out.Fields = append(out.Fields, filterField{Name: f.Name, Type: f.Kind.String(), Many: f.Multi, Doc: f.Doc})
		}
		_, err := sip.Compile(string(in.Filter))
		if err == nil {
			return out, nil
		}
		out.Valid = false
		msg := err.Error()
		out.Message = &msg
		var fe *filter.Error
		if errors.As(err, &fe) {
			col, ptr := fe.Col, fe.Pointer()
			out.Column, out.Message, out.Pointer = &col, &fe.Msg, &ptr
		}
		return out, nil
	},
}
