package mcp

import (
	"encoding/base64"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"fieldtap/services/filter"
	"fieldtap/services/netdecode"
	"fieldtap/services/sip"
)

// Tool names in the sip bundle.
const (
	toolListDialogs      = "list_dialogs"
	toolGetDialog        = "get_dialog"
	toolGetMessage       = "get_message"
	toolAggregateDialogs = "aggregate_dialogs"
	toolFindProblems     = "find_problems"
	toolTriageCall       = "triage_call"
	toolValidateFilter   = "validate_filter"
	toolSIPReport        = "get_capture_report"
)

// Paging bounds of the SIP list tools (issue #3).
const (
	sipDefaultLimit     = 50
	sipMaxLimit         = 1000
	sipDefaultBuckets   = 20
	sipMaxBuckets       = 1000
	sipMessagesPageSize = 100 // get_dialog messages per page
)

const (
	codeSIPNotFound = "NOT_FOUND"
	codeBadFilter   = "INVALID_FILTER"
	codeNoSIPStore  = "NO_SIP_STORE"
)

// SIPStats reports the SPAN analysers' stream and decode counters.
type SIPStats func() (sip.StreamStats, netdecode.Stats)

// Fields tagged untrusted:"true" hold capture-derived free text; issue #7
// fences them. Identifiers (Call-ID, addresses, URI users) stay bare.

type dialogRow struct {
	CallID          string   `json:"call_id"`
	ID              uint64   `json:"id"`
	Created         string   `json:"created"`
	Updated         string   `json:"updated"`
	FirstMethod     string   `json:"first_method"`
	Methods         []string `json:"methods"`
	State           string   `json:"state"`
	FinalCode       *int     `json:"final_code"`
	FinalReason     string   `json:"final_reason,omitempty" untrusted:"true"`
	ReasonHeader    string   `json:"reason_header,omitempty" untrusted:"true"`
	FromUser        string   `json:"from_user"`
	ToUser          string   `json:"to_user"`
	FromDisplay     string   `json:"from_display,omitempty" untrusted:"true"`
	ToDisplay       string   `json:"to_display,omitempty" untrusted:"true"`
	Src             string   `json:"src"`
	Dst             string   `json:"dst"`
	Participants    []string `json:"participants"`
	UserAgents      []string `json:"user_agents" untrusted:"true"`
	Transport       string   `json:"transport"`
	Messages        int      `json:"messages"`
	Retransmits     int      `json:"retransmits"`
	Transactions    int      `json:"transactions"`
	AuthChallenges  int      `json:"auth_challenges"`
	Forks           int      `json:"forks"`
	PDDms           *float64 `json:"pdd_ms"`
	SetupMs         *float64 `json:"setup_ms"`
	DurationMs      *float64 `json:"duration_ms"`
	MessagesShed    int      `json:"messages_shed"`
	MethodsOverflow int      `json:"methods_overflow,omitempty"`
}

func ms(d time.Duration, ok bool) *float64 {
	if !ok {
		return nil
	}
	v := float64(d) / float64(time.Millisecond)
	return &v
}

func ts(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

func newDialogRow(d *sip.Dialog) dialogRow {
	r := dialogRow{
		CallID: d.CallID, ID: d.ID, Created: ts(d.Created), Updated: ts(d.Updated),
		FirstMethod: d.FirstMethod, Methods: nonNil(d.Methods), State: d.State,
		FinalReason: d.FinalReason, ReasonHeader: d.ReasonHeader,
		FromUser: d.FromUser, ToUser: d.ToUser, FromDisplay: d.FromDisplay, ToDisplay: d.ToDisplay,
		Src: d.Src.String(), Dst: d.Dst.String(), UserAgents: nonNil(d.UserAgents), Transport: d.Transport,
		Messages: d.Requests + d.Responses, Retransmits: d.Retransmits, Transactions: d.Transactions,
		AuthChallenges: d.AuthChallenge, Forks: len(d.ToTags), MessagesShed: d.MessagesShed, MethodsOverflow: d.MethodsOver,
		PDDms: ms(d.PDD()), SetupMs: ms(d.Setup()), DurationMs: ms(d.Duration()),
	}
	if d.FinalCode != 0 {
		c := d.FinalCode
		r.FinalCode = &c
	}
	r.Participants = []string{}
	for _, p := range d.Participants {
		r.Participants = append(r.Participants, p.String())
	}
	return r
}

// sipCursor is opaque: capture identity, created time and dialog id. The
// id decides the position (ids only grow), the time makes a cursor
// self-describing, the identity refuses one from another run.
func sipCursor(src SourceInfo, d *sip.Dialog) string {
	return base64.RawURLEncoding.EncodeToString(fmt.Appendf(nil, "%s|%d|%d", src.CaptureIdentity, d.Created.UnixNano(), d.ID))
}

func sipParseCursor(src SourceInfo, c string) (uint64, bool, error) {
	if c == "" {
		return 0, false, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(c)
	parts := strings.Split(string(b), "|")
	if err != nil || len(parts) != 3 || parts[0] != src.CaptureIdentity {
		return 0, false, fmt.Errorf("cursor is not one this capture issued")
	}
	id, err := strconv.ParseUint(parts[2], 10, 64)
	if err != nil {
		return 0, false, fmt.Errorf("cursor is not one this capture issued")
	}
	return id, true, nil
}

func sipLimit(n, def, maxN int) (int, error) {
	switch {
	case n == 0:
		return def, nil
	case n < 0 || n > maxN:
		return 0, fmt.Errorf("limit %d: want 1..%d", n, maxN)
	}
	return n, nil
}

// sipSnapshot returns a consistent view, or a failure when the box has no
// SPAN analyser.
func sipSnapshot(d Deps) (*sip.Snapshot, *mcpgo.CallToolResult) {
	if d.SIP == nil {
		return nil, fail(d.Source(), codeNoSIPStore, "this box has no SIP store (no Ethernet port)", "check capture_status for ethernet ports")
	}
	return d.SIP.Snapshot(), nil
}

// dimensionQuery is what aggregate_dialogs and group_dialogs both take
// before they count: a snapshot, one dimension, a bucket limit, a filter.
type dimensionQuery struct {
	sn    *sip.Snapshot
	limit int
	match *filter.Expr
}

// dimensionArgs checks those arguments once for both tools; what names the
// buckets ("buckets", "groups") goes into the hint.
func dimensionArgs(d Deps, dimension string, limit int, filterSrc, what string) (dimensionQuery, *mcpgo.CallToolResult) {
	sn, f := sipSnapshot(d)
	if f != nil {
		return dimensionQuery{}, f
	}
	if !slices.Contains(sip.Dimensions, dimension) {
		return dimensionQuery{}, fail(d.Source(), CodeInvalidArgument, fmt.Sprintf("unknown dimension %q", dimension), "use one of "+strings.Join(sip.Dimensions, ", "))
	}
	n, err := sipLimit(limit, sipDefaultBuckets, sipMaxBuckets)
	if err != nil {
		return dimensionQuery{}, fail(d.Source(), CodeInvalidArgument, err.Error(), "ask for fewer "+what)
	}
	e, f := compileFilter(d, filterSrc)
	if f != nil {
		return dimensionQuery{}, f
	}
	return dimensionQuery{sn: sn, limit: n, match: e}, nil
}

func compileFilter(d Deps, src string) (*filter.Expr, *mcpgo.CallToolResult) {
	e, err := sip.Compile(src)
	if err != nil {
		hint := "see docs/filter.md; call validate_filter to check a filter"
		if fe, ok := err.(*filter.Error); ok {
			hint = fe.Pointer() + "\n" + hint
		}
		return nil, fail(d.Source(), codeBadFilter, "filter: "+err.Error(), hint)
	}
	return e, nil
}

// pageDialogs applies match, the cursor and limit over dialogs in id order.
func pageDialogs(src SourceInfo, ds []*sip.Dialog, match func(*sip.Dialog) bool, cursor string, limit int) ([]*sip.Dialog, Page, error) {
	after, has, err := sipParseCursor(src, cursor)
	if err != nil {
		return nil, Page{}, err
	}
	start := 0
	if has {
		start = sort.Search(len(ds), func(i int) bool { return ds[i].ID > after })
	}
	var out []*sip.Dialog
	total := 0
	next := ""
	for i, d := range ds {
		if !match(d) {
			continue
		}
		total++
		if i < start {
			continue
		}
		if len(out) < limit {
			out = append(out, d)
		} else if next == "" {
			next = sipCursor(src, out[len(out)-1])
		}
	}
	return out, Page{Returned: len(out), TotalMatched: total, Truncated: next != "", NextCursor: next}, nil
}

func sipTools(d Deps) []server.ServerTool {
	return slices.Concat(sipDialogTools(d), sipAnalysisTools(d), []server.ServerTool{sipSearchTool(d)},
		sipStatsTools(d), sipLiveTools(d), sipExportTools(d))
}
