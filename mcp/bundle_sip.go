package mcp

import (
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"fieldtap/mcp/untrusted"
	"fieldtap/services/filter"
	"fieldtap/services/netdecode"
	"fieldtap/services/sip"
)

// sipTools is the sip bundle: dialogs and messages, analysis, search,
// call figures, live polling, the ladder and the pcapng export.
var sipTools = []toolDef{listDialogs, getDialog, getMessage, validateFilter, aggregateDialogs, findProblems, triageCall,
	captureReport, searchMessages, groupDialogs, timelineTool, tailDialogs, awaitCondition, renderLadder, exportCapture}

// SIPStats reports the SPAN analysers' stream and decode counters.
type SIPStats func() (sip.StreamStats, netdecode.Stats)

// filterArg is a dialog filter in the filter language (docs/filter.md).
type filterArg string

func (filterArg) argSchema() *jsonschema.Schema {
	n := filter.MaxSource
	return &jsonschema.Schema{Type: "string", MaxLength: &n,
		Description: "dialog filter (docs/filter.md), e.g. state == failed; empty matches all"}
}

// compile compiles the filter, or answers INVALID_FILTER with a caret
// under the column that is wrong.
func (f filterArg) compile() (*filter.Expr, error) {
	e, err := sip.Compile(string(f))
	if err != nil {
		hint := "call validate_filter to check a filter; docs/filter.md is the reference"
		var fe *filter.Error
		if errors.As(err, &fe) {
			hint = fe.Pointer() + "\n" + hint
		}
		return nil, failErr(CodeInvalidFilter, "filter: "+err.Error(), hint)
	}
	return e, nil
}

// callIDArg is a Call-ID exactly as list_dialogs returns it.
type callIDArg string

func (callIDArg) argSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", Description: "Call-ID as list_dialogs returns it"}
}

// lookupDialog finds a dialog in the snapshot, or NOT_FOUND.
func lookupDialog(sn *sip.Snapshot, callID callIDArg) (*sip.Dialog, error) {
	if dl := sn.Lookup(string(callID)); dl != nil {
		return dl, nil
	}
	return nil, noDialog(callID)
}

// noDialog is NOT_FOUND for a Call-ID the store does not keep.
func noDialog(callID callIDArg) error {
	return notFound("list_dialogs shows the Call-IDs kept; an old one may have been evicted (get_capture_report counts dialogs_evicted)",
		"no dialog with Call-ID %q", string(callID))
}

// dialogRow is one dialog as the list tools show it. Sender text
// (reason phrase, Reason header, display names, User-Agents) is
// untrusted; identifiers (Call-ID, URI users, addresses) and the box's
// vocabulary (methods, states, transports) are plain.
type dialogRow struct {
	CallID          string           `json:"call_id"`
	ID              uint64           `json:"id" jsonschema:"arrival order in the store, never reused"`
	Created         string           `json:"created" jsonschema:"RFC 3339 capture time of the first message"`
	Updated         string           `json:"updated" jsonschema:"RFC 3339 capture time of the last message"`
	FirstMethod     string           `json:"first_method"`
	Methods         []string         `json:"methods"`
	State           string           `json:"state"`
	FinalCode       *int             `json:"final_code" jsonschema:"final status of the call (its INVITE transactions; a 2xx sticks) or, without an INVITE, of the first request; null while none"`
	FinalReason     untrusted.Text   `json:"final_reason,omitempty" jsonschema:"its reason phrase as the sender wrote it"`
	ReasonHeader    untrusted.Text   `json:"reason_header,omitempty" jsonschema:"an RFC 3326 Reason header, as written"`
	FromUser        string           `json:"from_user"`
	ToUser          string           `json:"to_user"`
	FromDisplay     untrusted.Text   `json:"from_display,omitempty"`
	ToDisplay       untrusted.Text   `json:"to_display,omitempty"`
	Src             string           `json:"src" jsonschema:"IP:port the first request came from"`
	Dst             string           `json:"dst" jsonschema:"IP:port the first request went to"`
	Participants    []string         `json:"participants"`
	UserAgents      []untrusted.Text `json:"user_agents"`
	Transport       string           `json:"transport"`
	Messages        int              `json:"messages"`
	Retransmits     int              `json:"retransmits"`
	Transactions    int              `json:"transactions"`
	TxnsShed        int              `json:"transactions_shed" jsonschema:"transactions past the per-dialog bound, counted and not kept (get_dialog lists the kept)"`
	AuthChallenges  int              `json:"auth_challenges"`
	Forks           int              `json:"forks"`
	PDDms           *float64         `json:"pdd_ms" jsonschema:"INVITE to first 180/183; null when either is missing"`
	SetupMs         *float64         `json:"setup_ms" jsonschema:"INVITE to 2xx; null when unanswered"`
	DurationMs      *float64         `json:"duration_ms" jsonschema:"2xx to BYE; null when either is missing"`
	MessagesShed    int              `json:"messages_shed" jsonschema:"messages past the per-dialog cap, counted and not kept"`
	MethodsOverflow int              `json:"methods_overflow,omitempty"`
}

func ms(d time.Duration, ok bool) *float64 {
	if !ok {
		return nil
	}
	v := float64(d) / float64(time.Millisecond)
	return &v
}

// ts is the one time spelling of SIP answers: RFC 3339 in UTC.
func ts(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

func finalCode(code int) *int {
	if code == 0 {
		return nil
	}
	return &code
}

func dialogRowOf(d *sip.Dialog) dialogRow {
	r := dialogRow{
		CallID: d.CallID, ID: d.ID, Created: ts(d.Created), Updated: ts(d.Updated),
		FirstMethod: d.FirstMethod, Methods: nonNil(d.Methods), State: d.State, FinalCode: finalCode(d.FinalCode),
		FinalReason: untrusted.Text(d.FinalReason), ReasonHeader: untrusted.Text(d.ReasonHeader),
		FromUser: d.FromUser, ToUser: d.ToUser, FromDisplay: untrusted.Text(d.FromDisplay), ToDisplay: untrusted.Text(d.ToDisplay),
		Src: d.Src.String(), Dst: d.Dst.String(), Participants: make([]string, 0, len(d.Participants)),
		UserAgents: nonNil(untrusted.Texts(d.UserAgents)), Transport: d.Transport,
		Messages: d.Requests + d.Responses, Retransmits: d.Retransmits, Transactions: d.Transactions, TxnsShed: d.TxnsShed,
		AuthChallenges: d.AuthChallenge, Forks: len(d.ToTags), MessagesShed: d.MessagesShed, MethodsOverflow: d.MethodsOver,
		PDDms: ms(d.PDD()), SetupMs: ms(d.Setup()), DurationMs: ms(d.Duration()),
	}
	for _, p := range d.Participants {
		r.Participants = append(r.Participants, p.String())
	}
	return r
}

// pageDialogs pages the dialogs e matches and, unless problems is 0,
// that match one of its problem aliases (sip.ProblemMask), oldest first,
// keyed by dialog id (arrival order, never reused), warning when dialogs
// between the cursor and the oldest one kept were evicted. With an empty
// filter and no problems only the dialogs on the page are read, because
// ids ascend and the rest need only be counted (a store of 100 000
// dialogs spread over the heap costs a cache miss per dialog read); a
// filter is evaluated by sip's Each, on the snapshot's columns where it
// can.
func pageDialogs[R any](c *call, p Paging, sn *sip.Snapshot, e *filter.Expr, problems uint32, row func(*sip.Dialog) R) (page[R], error) {
	pg, err := newPager(c, p)
	if err != nil {
		return page[R]{}, err
	}
	ds := sn.Dialogs
	if len(ds) > 0 && pg.resumed && pg.from[0] < ds[0].ID {
		pg.evicted(ds[0].ID-pg.from[0], "dialogs")
	}
	rows := []R{}
	if e.MatchesAll() && problems == 0 {
		start := 0
		if pg.resumed {
			start = sort.Search(len(ds), func(i int) bool { return ds[i].ID >= pg.from[0] })
		}
		end := min(start+pg.limit+1, len(ds)) // the page and the row after it, for next_cursor
		pg.matched += start                   // before the cursor: they match, off the page
		for _, dl := range ds[start:end] {
			if pg.offer(key1(dl.ID)) {
				rows = append(rows, row(dl))
			}
		}
		pg.matched += len(ds) - end // after the page: likewise
		return page[R]{Items: rows, Page: pg.page()}, nil
	}
	sn.Each(e, problems, func(id uint64, dl *sip.Dialog) {
		if pg.offer(key1(id)) {
			rows = append(rows, row(dl))
		}
	})
	return page[R]{Items: rows, Page: pg.page()}, nil
}

// messageRow is one message of a dialog. Method names and status codes
// are the parser's checked tokens; the start line is sender text.
type messageRow struct {
	Index          int            `json:"index" jsonschema:"position among the dialog's kept messages, from 0: what get_message takes"`
	Time           string         `json:"time,omitempty"`
	Src            string         `json:"src,omitempty"`
	Dst            string         `json:"dst,omitempty"`
	Transport      string         `json:"transport,omitempty"`
	Request        bool           `json:"request"`
	Method         string         `json:"method,omitempty" jsonschema:"the request's method, or a response's CSeq method"`
	StatusCode     int            `json:"status_code,omitempty"`
	CSeq           uint32         `json:"cseq,omitempty"`
	Retransmission bool           `json:"retransmission"`
	StartLine      untrusted.Text `json:"start_line,omitempty"`
	// Evicted marks a message whose bytes the store's byte bound evicted:
	// only its index is known.
	Evicted bool `json:"evicted"`
}

func messageRowOf(m *sip.Message) messageRow {
	return messageRow{Index: m.Index, Time: ts(m.Time), Src: m.Src.String(), Dst: m.Dst.String(), Transport: m.Transport,
		Request: m.Request, Method: m.Method, StatusCode: m.StatusCode, CSeq: m.CSeq, Retransmission: m.Retransmission,
		StartLine: untrusted.Text(m.StartLine())}
}

// sipCount is an argument with a range and a default, for the bounds of
// the tools whose answer is one object (render_ladder's arrows,
// export_capture's dialogs, the buckets of aggregate_dialogs and
// group_dialogs): named max_<what it bounds> in every tool.
func sipCount(what string, lo, hi, def int) *jsonschema.Schema {
	return withDefault(intSchema(fmt.Sprintf("most %s, %d to %d (default %d)", what, lo, hi, def), float64(lo), float64(hi)), def)
}

// count returns v, or def when the argument was absent.
func count(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}
