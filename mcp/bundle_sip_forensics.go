package mcp

import (
	"cmp"
	"errors"
	"fmt"
	"net/netip"

	"github.com/google/jsonschema-go/jsonschema"

	"fieldtap/mcp/untrusted"
	"fieldtap/services/filter"
	"fieldtap/services/sip"
	"fieldtap/services/siplint"
	"fieldtap/services/sipsecurity"
)

// sipForensicsTools is the sip_forensics bundle: what an engineer asks
// after the dialog list — a hand-off to Wireshark, messages by time,
// endpoints, B2BUA legs, attacks, conformance.
var sipForensicsTools = []toolDef{wiresharkFilter, searchByTime, describeEndpoint, topTalkers, findCorrelated, getCallTree, securityFindings, lintDialog, validateMessage, explainRule, exportVCon}

type wiresharkFilterIn struct {
	CallID callIDArg `json:"call_id"`
	// NoMedia leaves the RTP/RTCP terms out (a default false reads as
	// "with media", so the flag is the exception).
	NoMedia bool `json:"no_media,omitempty" jsonschema:"only the SIP messages, no RTP/RTCP terms"`
}

type wiresharkFilterOut struct {
	CallID string `json:"call_id"`
	Filter string `json:"filter" jsonschema:"the display filter for Wireshark or tshark -Y: the call's SIP messages or its media"`
	SIP    string `json:"sip" jsonschema:"only the SIP part"`
	Media  string `json:"media" jsonschema:"only the media part; empty without media flows"`
	// MediaFlows counts the flows in media; FlowsLeftOut those past the bound.
	MediaFlows   int    `json:"media_flows"`
	FlowsLeftOut int    `json:"flows_left_out" jsonschema:"media flows past 16, not in the filter"`
	MediaReason  string `json:"media_reason,omitempty" jsonschema:"why media is empty"`
}

var wiresharkFilter = tool[wiresharkFilterIn, wiresharkFilterOut]{
	name:  "generate_wireshark_filter",
	reads: readsSIP,
	desc:  "A Wireshark display filter for one call: its Call-ID (escaped per the filter grammar) or each RTP/RTCP flow the box tied to it.",
	hints: readOnly(),
	run: func(c *call, in wiresharkFilterIn) (wiresharkFilterOut, error) {
		sn := c.d.SIP.Snapshot()
		dl, err := lookupDialog(sn, in.CallID)
		if err != nil {
			return wiresharkFilterOut{}, err
		}
		var flows []sip.MediaFlow
		reason := "no_media was asked"
		if !in.NoMedia {
			flows, reason = c.d.Media.Snapshot(false).Flows(dl.CallID), ""
			if len(flows) == 0 {
				reason = "no RTP or RTCP flow was tied to this call"
			}
		}
		f, err := sip.WiresharkFilter(dl.CallID, flows)
		if errors.Is(err, sip.ErrFilterControl) {
			return wiresharkFilterOut{}, argErr("call_id", "filter on the call's addresses instead (list_dialogs gives src and dst)", "%v: a display filter cannot carry it", err)
		}
		if err != nil {
			return wiresharkFilterOut{}, err
		}
		return wiresharkFilterOut{CallID: dl.CallID, Filter: f.All, SIP: f.SIP, Media: f.Media,
			MediaFlows: len(flows) - f.FlowsLeftOut, FlowsLeftOut: f.FlowsLeftOut, MediaReason: reason}, nil
	},
}

type searchByTimeIn struct {
	window
	Filter filterArg `json:"filter,omitempty"`
	Paging
	Projection
}

// timeRow is one message in time order.
type timeRow struct {
	CallID string `json:"call_id"`
	messageRow
	at, seq uint64 // the cursor key: capture time, then store sequence
}

var searchByTime = tool[searchByTimeIn, page[timeRow]]{
	name:  "search_by_time",
	reads: readsSIP | readsMedia,
	desc:  "SIP messages in a capture-time window (since, until), of the dialogs a filter matches, in time order; paged by a time and sequence cursor.",
	hints: readOnly(),
	ids:   []string{"call_id", "index"},
	text:  []textSource{textSIP},
	run: func(c *call, in searchByTimeIn) (page[timeRow], error) {
		sn := c.d.SIP.Snapshot()
		sp, err := in.span()
		if err != nil {
			return page[timeRow]{}, err
		}
		e, err := in.Filter.compile()
		if err != nil {
			return page[timeRow]{}, err
		}
		pg, err := newPager(c, in.Paging)
		if err != nil {
			return page[timeRow]{}, err
		}
		// The page is the matches of the least (time, sequence) at or
		// after the cursor (messages from several ports arrive out of
		// time order), and the one after it names the next page: they
		// are selected, not sorted all (keySelect), and rows made of the
		// page's alone. At 600,000 messages a row for each, sorted, was
		// most of a call.
		sel := keySelect[*sip.Message]{n: pg.limit + 1, least: true}
		total := 0
		// A message counts while its dialog is kept; with no filter that
		// is all it asks of the dialog (HoldsDialog reads none).
		all := e.MatchesAll()
		each := func(m *sip.Message) bool {
			if !sp.holds(m.Time) {
				return true
			}
			if all {
				if !sn.HoldsDialog(m.DialogID) {
					return true
				}
			} else if dl := sn.DialogByID(m.DialogID); dl == nil || !e.Match(dl) {
				return true
			}
			total++
			// Offset so times before 1970 still sort first as unsigned keys.
			if k := (rowKey{uint64(m.Time.UnixNano()) ^ 1<<63, m.Seq}); !k.less(pg.from) {
				sel.offer(k, m)
			}
			return c.ctx.Err() == nil
		}
		if sp == (span{}) {
			sn.RangeMessages(0, each)
		} else {
			// A window: the ring's kept times pass over the messages
			// outside it without reading them.
			sn.RangeMessagesBetween(sp.since, sp.until, each)
		}
		if err := c.ctx.Err(); err != nil {
			return page[timeRow]{}, fmt.Errorf("search_by_time cancelled: %w", err)
		}
		rows := []timeRow{}
		for _, kv := range sel.sorted() {
			if pg.offer(kv.k) {
				rows = append(rows, timeRow{CallID: kv.v.CallID, messageRow: messageRowOf(kv.v), at: kv.k[0], seq: kv.k[1]})
			}
		}
		p := pg.page()
		p.TotalMatched = total // the matches before the cursor count too
		return page[timeRow]{Items: rows, Page: p}, nil
	},
}

// ipArg is an IPv4 or IPv6 address.
type ipArg string

func (ipArg) argSchema() *jsonschema.Schema {
	n := len("ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255")
	return &jsonschema.Schema{Type: "string", MaxLength: &n, Description: "an IPv4 or IPv6 address, e.g. 192.0.2.10"}
}

// userArg is a SIP URI user part.
type userArg string

func (userArg) argSchema() *jsonschema.Schema {
	n := 256
	return &jsonschema.Schema{Type: "string", MaxLength: &n, Description: "a SIP URI user (From or To), e.g. 1001"}
}

type describeEndpointIn struct {
	IP     ipArg     `json:"ip,omitempty"`
	User   userArg   `json:"user,omitempty"`
	Filter filterArg `json:"filter,omitempty"`
}

// countRow is a value and its count; values are the box's vocabulary or
// identifiers (methods, outcomes, codes, addresses).
type countRow struct {
	Value string `json:"value"`
	Count int    `json:"count"`
}

func countRows(cs []sip.Count) []countRow {
	out := make([]countRow, 0, len(cs))
	for _, c := range cs {
		out = append(out, countRow{Value: c.Value, Count: c.N})
	}
	return out
}

type describeEndpointOut struct {
	IP              string           `json:"ip,omitempty"`
	User            string           `json:"user,omitempty"`
	Dialogs         int              `json:"dialogs" jsonschema:"dialogs it took part in"`
	AsCaller        int              `json:"as_caller" jsonschema:"sent the first request (by ip) or was the From user"`
	AsCallee        int              `json:"as_callee" jsonschema:"received the first request (by ip) or was the To user"`
	First           *string          `json:"first_seen" jsonschema:"null without a dialog"`
	Last            *string          `json:"last_seen"`
	Methods         []countRow       `json:"methods" jsonschema:"dialogs per method, at most 20"`
	MethodsOther    int              `json:"methods_other"`
	Outcomes        []countRow       `json:"attempt_outcomes" jsonschema:"call attempts per outcome"`
	FinalCodes      []countRow       `json:"attempt_final_codes" jsonschema:"call attempts per final code, (none) while none"`
	Registrations   int              `json:"registrations" jsonschema:"REGISTER transactions it sent (by ip) or for it (by user)"`
	RegisterResults []countRow       `json:"registration_results" jsonschema:"those per final code, (none) while none"`
	Peers           []countRow       `json:"peers" jsonschema:"other addresses by dialogs shared, at most 10"`
	PeersOther      int              `json:"peers_other"`
	UserAgents      []untrusted.Text `json:"user_agents" jsonschema:"User-Agent and Server values of its dialogs, at most 8"`
	CallIDs         []string         `json:"call_ids" jsonschema:"its oldest dialogs, at most 10"`
}

var describeEndpoint = tool[describeEndpointIn, describeEndpointOut]{
	name:  "describe_endpoint",
	reads: readsSIP | readsMedia,
	desc:  "One endpoint by ip or by user (not both): its dialogs as caller and callee, methods, call attempt outcomes, registrations by result, peers, User-Agents.",
	hints: readOnly(),
	text:  []textSource{textSIP},
	run: func(c *call, in describeEndpointIn) (describeEndpointOut, error) {
		if (in.IP == "") == (in.User == "") {
			return describeEndpointOut{}, argErr("ip", "give ip (an address) or user (a URI user), not both", "want exactly one of ip and user")
		}
		var q sip.EndpointQuery
		if in.IP != "" {
			a, err := netip.ParseAddr(string(in.IP))
			if err != nil {
				return describeEndpointOut{}, argErr("ip", "an IPv4 or IPv6 address such as 192.0.2.10", "%q is not an address", string(in.IP))
			}
			q.IP = a.Unmap()
		}
		q.User = string(in.User)
		sn := c.d.SIP.Snapshot()
		e, err := in.Filter.compile()
		if err != nil {
			return describeEndpointOut{}, err
		}
		v := sip.DescribeEndpoint(sn.Dialogs, func(dl *sip.Dialog) bool { return e.Match(dl) }, q)
		out := describeEndpointOut{User: q.User, Dialogs: v.Dialogs, AsCaller: v.AsCaller, AsCallee: v.AsCallee,
			Methods: countRows(v.Methods), MethodsOther: v.MethodsOther, Outcomes: countRows(v.Outcomes), FinalCodes: countRows(v.FinalCodes),
			Registrations: v.Registrations, RegisterResults: countRows(v.RegisterResults), Peers: countRows(v.Peers), PeersOther: v.PeersOther,
			UserAgents: nonNil(untrusted.Texts(v.UserAgents)), CallIDs: nonNil(v.CallIDs)}
		if q.IP.IsValid() {
			out.IP = q.IP.String()
		}
		if v.Dialogs > 0 {
			f, l := ts(v.First), ts(v.Last)
			out.First, out.Last = &f, &l
		}
		return out, nil
	},
}

// talkerDimArg is what top_talkers counts by.
type talkerDimArg string

func (talkerDimArg) argSchema() *jsonschema.Schema {
	return enumArg("count participants by address or by URI user", []string{"participant_ip", "participant_user"})
}

type topTalkersIn struct {
	By         talkerDimArg  `json:"by,omitempty"`
	Filter     filterArg     `json:"filter,omitempty"`
	MaxTalkers maxBucketsArg `json:"max_talkers,omitempty"`
}

type talkerRow struct {
	Value   string  `json:"value" jsonschema:"an address or a URI user (an identifier)"`
	Dialogs int     `json:"dialogs"`
	Share   float64 `json:"share" jsonschema:"dialogs / total_dialogs; a dialog has several participants, so shares add up to more than 1"`
}

type topTalkersOut struct {
	By           string      `json:"by"`
	Talkers      []talkerRow `json:"talkers" jsonschema:"largest first"`
	OtherTalkers int         `json:"other_talkers" jsonschema:"participants past max_talkers"`
	TotalDialogs int         `json:"total_dialogs" jsonschema:"dialogs matched: the population of every share"`
}

var topTalkers = tool[topTalkersIn, topTalkersOut]{
	name:  "top_talkers",
	reads: readsSIP,
	desc:  "Participants (addresses, or URI users) by the dialogs they took part in, largest first, each with its share of the dialogs matched (shares sum above 1).",
	hints: readOnly(),
	run: func(c *call, in topTalkersIn) (topTalkersOut, error) {
		sn := c.d.SIP.Snapshot()
		e, err := in.Filter.compile()
		if err != nil {
			return topTalkersOut{}, err
		}
		by := cmp.Or(string(in.By), "participant_ip")
		// The snapshot's aggregation, from its participant column once
		// asked twice (a quiet store), as aggregate_dialogs reads it.
		top, n, others := sip.TopTalkers(sn.Aggregate(e, by, count(int(in.MaxTalkers), defaultBuckets)))
		out := topTalkersOut{By: by, Talkers: make([]talkerRow, 0, len(top)), OtherTalkers: others, TotalDialogs: n}
		for _, t := range top {
			out.Talkers = append(out.Talkers, talkerRow{Value: t.Value, Dialogs: t.Dialogs, Share: t.Share})
		}
		return out, nil
	},
}

type correlateIn struct {
	CallID callIDArg `json:"call_id"`
}

// evidenceRow is one reason two legs correlate. A Session-ID UUID is
// checked hex (an identifier); other values are sender text.
type evidenceRow struct {
	By        string          `json:"by" jsonschema:"session_id, charging_vector, x_header or timing_heuristic"`
	Header    string          `json:"header,omitempty" jsonschema:"the header it was read from"`
	UUID      string          `json:"uuid,omitempty" jsonschema:"the shared Session-ID UUID"`
	Value     *untrusted.Text `json:"value,omitempty" jsonschema:"the shared icid-value or X- header value, as written"`
	Heuristic bool            `json:"heuristic" jsonschema:"true for timing_heuristic: INVITEs within 2 s sharing a From or To user, a guess"`
}

func evidenceRows(ev []sip.Evidence) []evidenceRow {
	out := make([]evidenceRow, 0, len(ev))
	for _, e := range ev {
		r := evidenceRow{By: e.By, Header: e.Header, Heuristic: e.Heuristic}
		switch {
		case e.By == sip.BySessionID:
			r.UUID = e.Value
		case e.Value != "":
			v := untrusted.Text(e.Value)
			r.Value = &v
		}
		out = append(out, r)
	}
	return out
}

type legRow struct {
	CallID    string        `json:"call_id"`
	Created   string        `json:"created"`
	FromUser  string        `json:"from_user"`
	ToUser    string        `json:"to_user"`
	State     string        `json:"state"`
	FinalCode *int          `json:"final_code"`
	Evidence  []evidenceRow `json:"evidence"`
}

func legRowOf(d *sip.Dialog, ev []sip.Evidence) legRow {
	return legRow{CallID: d.CallID, Created: ts(d.Created), FromUser: d.FromUser, ToUser: d.ToUser, State: d.State,
		FinalCode: finalCode(d.FinalCode), Evidence: evidenceRows(ev)}
}

type correlateOut struct {
	CallID     string   `json:"call_id"`
	Correlated []legRow `json:"correlated" jsonschema:"oldest first, each with its evidence"`
	More       int      `json:"more" jsonschema:"correlated dialogs past 50, not listed"`
}

var findCorrelated = tool[correlateIn, correlateOut]{
	name:  "find_correlated",
	reads: readsSIP,
	desc:  "Dialogs that are other legs of one call (a B2BUA, a PBX): by Session-ID (RFC 7989), P-Charging-Vector, X- headers, or a timing heuristic labelled as one.",
	hints: readOnly(),
	text:  []textSource{textSIP},
	run: func(c *call, in correlateIn) (correlateOut, error) {
		sn := c.d.SIP.Snapshot()
		dl, err := lookupDialog(sn, in.CallID)
		if err != nil {
			return correlateOut{}, err
		}
		cs, more := sip.FindCorrelated(sn.Dialogs, dl)
		out := correlateOut{CallID: dl.CallID, Correlated: make([]legRow, 0, len(cs)), More: more}
		for _, cr := range cs {
			out.Correlated = append(out.Correlated, legRowOf(cr.D, cr.Evidence))
		}
		return out, nil
	},
}

type treeNodeRow struct {
	legRow
	Parent *string `json:"parent" jsonschema:"the Call-ID it was reached from; null for the root"`
	Depth  int     `json:"depth"`
}

type callTreeOut struct {
	Root      string        `json:"root"`
	Legs      []treeNodeRow `json:"legs" jsonschema:"the root first, then by depth"`
	Truncated bool          `json:"truncated" jsonschema:"more than 64 legs: the rest are not listed"`
}

var getCallTree = tool[correlateIn, callTreeOut]{
	name:  "get_call_tree",
	reads: readsSIP,
	desc:  "Every leg of a call from one Call-ID: followed over Session-ID, charging vector and X- header links; timing-heuristic legs of the root only, never expanded.",
	hints: readOnly(),
	text:  []textSource{textSIP},
	run: func(c *call, in correlateIn) (callTreeOut, error) {
		sn := c.d.SIP.Snapshot()
		dl, err := lookupDialog(sn, in.CallID)
		if err != nil {
			return callTreeOut{}, err
		}
		nodes, truncated := sip.CallTree(sn.Dialogs, dl)
		out := callTreeOut{Root: dl.CallID, Legs: make([]treeNodeRow, 0, len(nodes)), Truncated: truncated}
		for _, n := range nodes {
			r := treeNodeRow{legRow: legRowOf(n.D, n.Evidence), Depth: n.Depth}
			if n.Parent != "" {
				p := n.Parent
				r.Parent = &p
			}
			out.Legs = append(out.Legs, r)
		}
		return out, nil
	},
}

type securityIn struct {
	Filter filterArg `json:"filter,omitempty"`
}

type securityThresholds struct {
	WindowSeconds  float64  `json:"window_seconds"`
	Registers      int      `json:"registers"`
	AuthChallenges int      `json:"auth_challenges"`
	Invites        int      `json:"invites"`
	OptionsTargets int      `json:"options_targets"`
	ScannerAgents  []string `json:"scanner_agents"`
}

type securityOut struct {
	Findings     []findingRow       `json:"findings" jsonschema:"one per episode, the largest total first, at most 100"`
	FindingsLeft int                `json:"findings_left" jsonschema:"findings past 100"`
	Dialogs      int                `json:"dialogs" jsonschema:"dialogs looked at"`
	TxnsShed     int                `json:"transactions_shed" jsonschema:"transactions the store did not keep: rates may be low by that many"`
	Thresholds   securityThresholds `json:"thresholds" jsonschema:"from the sip_security section of the configuration"`
}

var securityFindings = tool[securityIn, securityOut]{
	name:  "sip_security_findings",
	reads: readsSIP,
	desc:  "Attacks per source address, each with evidence: scanner User-Agents, REGISTER and INVITE floods, digest brute force (401/407 storms), OPTIONS sweeps; thresholds from config.",
	hints: readOnly(),
	text:  []textSource{textSIP},
	run: func(c *call, in securityIn) (securityOut, error) {
		e, err := in.Filter.compile()
		if err != nil {
			return securityOut{}, err
		}
		r, th := securityReport(c, e)
		out := securityOut{Findings: make([]findingRow, 0, len(r.Findings)), FindingsLeft: r.FindingsLeft, Dialogs: r.Dialogs, TxnsShed: r.TxnsShed,
			Thresholds: securityThresholds{WindowSeconds: th.Window.Seconds(), Registers: th.Registers, AuthChallenges: th.AuthChallenges,
				Invites: th.Invites, OptionsTargets: th.OptionsTargets, ScannerAgents: nonNil(th.ScannerAgents)}}
		for _, f := range r.Findings {
			out.Findings = append(out.Findings, findingRowOf(f))
		}
		return out, nil
	},
}

// securityReport analyses the dialogs e matches with the configured
// thresholds (sipsecurity.Defaults when none are).
func securityReport(c *call, e *filter.Expr) (sipsecurity.Report, sipsecurity.Thresholds) {
	sn := c.d.SIP.Snapshot()
	th := c.d.SIPSecurity
	if th.Window == 0 {
		th = sipsecurity.Defaults
	}
	return sipsecurity.AnalyseView(sn, e, th), th
}

type ruleRow struct {
	ID       string `json:"id" jsonschema:"explain_rule takes it"`
	RFC      string `json:"rfc"`
	Section  string `json:"section"`
	Severity string `json:"severity" jsonschema:"error, warning or info"`
	Summary  string `json:"summary"`
}

func ruleRowOf(r siplint.Rule) ruleRow {
	return ruleRow{ID: r.ID, RFC: r.RFC, Section: r.Section, Severity: string(r.Severity), Summary: r.Summary}
}

type violationRow struct {
	Rule   ruleRow `json:"rule"`
	CSeq   uint32  `json:"cseq"`
	Detail string  `json:"detail" jsonschema:"the box's own words"`
}

type notEvaluatedRow struct {
	Rule   ruleRow `json:"rule"`
	Reason string  `json:"reason"`
}

type lintOut struct {
	CallID            string            `json:"call_id"`
	Evaluated         []string          `json:"rules_evaluated"`
	Violations        []violationRow    `json:"violations"`
	RulesNotEvaluated []notEvaluatedRow `json:"rules_not_evaluated"`
}

var lintDialog = tool[correlateIn, lintOut]{
	name:  "lint_dialog",
	reads: readsSIP,
	desc:  "Check one dialog against field rules (missing ACK, re-INVITE glare, early CANCEL, SDP answer without offer, RTP on unannounced ports), each with its RFC section; lists rules not evaluated.",
	hints: readOnly(),
	run: func(c *call, in correlateIn) (lintOut, error) {
		sn := c.d.SIP.Snapshot()
		dl, err := lookupDialog(sn, in.CallID)
		if err != nil {
			return lintOut{}, err
		}
		media := c.d.Media.Snapshot(false)
		if media != nil && !media.Stats.Heuristic && media.Stats.Unsignalled > 0 {
			c.warnf("heuristic RTP detection is off: rtp_on_unannounced_port sees only streams with one announced side, not %d unsignalled RTP-looking datagrams", media.Stats.Unsignalled)
		}
		r := siplint.Lint(sn, dl, media)
		out := lintOut{CallID: dl.CallID, Evaluated: nonNil(r.Evaluated), Violations: make([]violationRow, 0, len(r.Violations)),
			RulesNotEvaluated: make([]notEvaluatedRow, 0, len(r.NotEvaluated))}
		for _, v := range r.Violations {
			out.Violations = append(out.Violations, violationRow{Rule: ruleRowOf(v.Rule), CSeq: v.CSeq, Detail: v.Detail})
		}
		for _, n := range r.NotEvaluated {
			out.RulesNotEvaluated = append(out.RulesNotEvaluated, notEvaluatedRow{Rule: ruleRowOf(n.Rule), Reason: n.Reason})
		}
		return out, nil
	},
}
