package mcp

import (
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"

	"fieldtap/mcp/untrusted"
	"fieldtap/services/sip"
)

// dimensionArg is the dimension aggregate_dialogs and group_dialogs count
// by, one of sip.Dimensions.
type dimensionArg string

func (dimensionArg) argSchema() *jsonschema.Schema {
	return enumArg("what to count by (method, user_agent: the first seen; participant_*: each participant)", sip.Dimensions)
}

// Bucket bounds of the answers that count by a dimension.
const (
	defaultBuckets = 20   // the distribution's head; the rest is counted as other
	maxBuckets     = 1000 // a bucket is ~60 bytes: a full answer stays near 64 KB
)

// maxBucketsArg bounds aggregate_dialogs' buckets.
type maxBucketsArg int

func (maxBucketsArg) argSchema() *jsonschema.Schema {
	return sipCount("buckets", 1, maxBuckets, defaultBuckets)
}

type aggregateIn struct {
	Dimension  dimensionArg  `json:"dimension"`
	Filter     filterArg     `json:"filter,omitempty"`
	MaxBuckets maxBucketsArg `json:"max_buckets,omitempty"`
}

// bucketRow is one bucket. Its value is either the box's own vocabulary
// or an identifier (value, bare) or, in a dimension whose values senders
// write (user_agent), sender text (text, fenced): exactly one is set.
type bucketRow struct {
	Value string         `json:"value,omitempty" jsonschema:"the bucket's value when it is the box's vocabulary or an identifier, and (none) for dialogs without one"`
	Text  untrusted.Text `json:"text,omitempty" jsonschema:"the bucket's value when senders wrote it (user_agent), fenced"`
	Count int            `json:"count"`
}

func bucketRowOf(dim, v string, n int) bucketRow {
	if sip.TextDimension(dim) && v != sip.NoValue {
		return bucketRow{Text: untrusted.Text(v), Count: n}
	}
	return bucketRow{Value: v, Count: n}
}

type aggregateOut struct {
	Dimension    string      `json:"dimension"`
	Buckets      []bucketRow `json:"buckets"`
	OtherBuckets int         `json:"other_buckets" jsonschema:"buckets past max_buckets"`
	OtherCount   int         `json:"other_count" jsonschema:"dialogs in them"`
	TotalMatched int         `json:"total_matched" jsonschema:"dialogs matched: the sum of every count and other_count unless multi_valued"`
	MultiValued  bool        `json:"multi_valued" jsonschema:"a participant dimension: a dialog counts once per participant, so counts add up to more than total_matched"`
}

var aggregateDialogs = tool[aggregateIn, aggregateOut]{
	name:  "aggregate_dialogs",
	reads: readsSIP,
	desc:  "Count dialogs by one dimension: buckets largest first (at most max_buckets), the rest in other_count; the counts add up to total_matched unless multi_valued (per participant).",
	hints: readOnly(),
	text:  []textSource{textSIP},
	run: func(c *call, in aggregateIn) (aggregateOut, error) {
		sn := c.d.SIP.Snapshot()
		e, err := in.Filter.compile()
		if err != nil {
			return aggregateOut{}, err
		}
		dim := string(in.Dimension)
		ag := sn.Aggregate(e, dim, count(int(in.MaxBuckets), defaultBuckets))
		out := aggregateOut{Dimension: dim, Buckets: make([]bucketRow, 0, len(ag.Buckets)), OtherBuckets: ag.OtherBuckets, OtherCount: ag.OtherCount, TotalMatched: ag.TotalMatched, MultiValued: ag.Multi}
		for _, b := range ag.Buckets {
			out.Buckets = append(out.Buckets, bucketRowOf(dim, b.Value, b.Count))
		}
		return out, nil
	},
}

// problemArg is one problem alias, one of sip.ProblemNames.
type problemArg string

func (problemArg) argSchema() *jsonschema.Schema {
	return enumArg("a problem alias (docs/sip.md)", sip.ProblemNames())
}

type findProblemsIn struct {
	Problems []problemArg `json:"problems,omitempty" jsonschema:"aliases; default all"`
	Filter   filterArg    `json:"filter,omitempty"`
	Paging
	Projection
}

// problemRow is a dialog row with the aliases it matched, and which of
// its call attempts matched them.
type problemRow struct {
	Problems []string            `json:"problems" jsonschema:"the aliases one of this dialog's call attempts (or, without an INVITE, the dialog) matched"`
	Attempts []attemptProblemRow `json:"attempts" jsonschema:"the call attempts that matched, each with its aliases; empty without an INVITE"`
	dialogRow
}

type attemptProblemRow struct {
	Attempt   int      `json:"attempt" jsonschema:"1-based, as triage_call numbers them"`
	FinalCode *int     `json:"final_code" jsonschema:"the attempt's final code; null while none"`
	Outcome   string   `json:"outcome" jsonschema:"answered, ended, failed, cancelled or in_progress, as triage_call says"`
	Problems  []string `json:"problems"`
}

func attemptProblemRows(ps []sip.AttemptProblem) []attemptProblemRow {
	out := make([]attemptProblemRow, 0, len(ps))
	for _, p := range ps {
		out = append(out, attemptProblemRow{Attempt: p.Attempt, FinalCode: finalCode(p.FinalCode), Outcome: p.Outcome, Problems: p.Problems})
	}
	return out
}

var findProblems = tool[findProblemsIn, page[problemRow]]{
	name:  "find_problems",
	reads: readsSIP | readsMedia,
	desc:  "Dialogs with a call attempt matching problem aliases (docs/sip.md: failed, slow-setup, short-calls, retransmits, no-ack, auth-loop), each row naming the aliases and attempts. Paged.",
	hints: readOnly(),
	ids:   []string{"call_id"},
	text:  []textSource{textSIP},
	run: func(c *call, in findProblemsIn) (page[problemRow], error) {
		sn := c.d.SIP.Snapshot()
		e, err := in.Filter.compile()
		if err != nil {
			return page[problemRow]{}, err
		}
		names := sip.ProblemNames()
		if len(in.Problems) > 0 {
			names = make([]string, len(in.Problems))
			for i, p := range in.Problems {
				names[i] = string(p)
			}
		}
		problems, mask := sip.CompiledProblems(), sip.ProblemMask(names)
		return pageDialogs(c, in.Paging, sn, e, mask,
			func(dl *sip.Dialog) problemRow {
				return problemRow{Problems: sip.MatchProblems(dl, names),
					Attempts: attemptProblemRows(sip.AttemptProblems(dl, problems, names)), dialogRow: dialogRowOf(dl)}
			})
	},
}

type triageIn struct {
	CallID callIDArg `json:"call_id"`
}

type triageOut struct {
	CallID    string `json:"call_id"`
	Outcome   string `json:"outcome" jsonschema:"answered, ended, failed, cancelled, in_progress or not_a_call"`
	FinalCode *int   `json:"final_code" jsonschema:"null while no final response"`
	// StatusText is the box's meaning of the code; the sender's reason
	// phrase (in cause) may say otherwise.
	StatusText *string         `json:"status_text" jsonschema:"the standard meaning of final_code (RFC 3261 §21 and extensions); null without a final code or for a code the box does not know"`
	Cause      *untrusted.Text `json:"cause" jsonschema:"the sender's own words: the Reason header, else the final response's reason phrase; null when cause_from is none"`
	CauseFrom  string          `json:"cause_from" jsonschema:"reason_header, status or none"`
	PDDms      *float64        `json:"pdd_ms"`
	SetupMs    *float64        `json:"setup_ms"`
	DurationMs *float64        `json:"duration_ms"`
	Problems   []string        `json:"problems"`
	Hints      []string        `json:"hints"`
	Attempts   []attemptRow    `json:"attempts" jsonschema:"every call attempt on the Call-ID (an INVITE with its auth retries and re-INVITEs), oldest first; the outcome is the last one's; empty without an INVITE"`
}

// attemptRow is one call attempt of triage_call.
type attemptRow struct {
	Attempt        int             `json:"attempt"`
	Start          string          `json:"start" jsonschema:"RFC 3339 time of its first INVITE"`
	Outcome        string          `json:"outcome"`
	FinalCode      *int            `json:"final_code"`
	StatusText     *string         `json:"status_text"`
	FinalReason    *untrusted.Text `json:"final_reason" jsonschema:"the reason phrase as the sender wrote it; null while no final response"`
	Invites        int             `json:"invites" jsonschema:"INVITE transactions in it"`
	AuthChallenges int             `json:"auth_challenges"`
	PDDms          *float64        `json:"pdd_ms"`
	SetupMs        *float64        `json:"setup_ms"`
	DurationMs     *float64        `json:"duration_ms"`
}

func attemptRowOf(a *sip.AttemptOutcome) attemptRow {
	r := attemptRow{Attempt: a.N, Start: ts(a.Start), Outcome: a.Outcome, FinalCode: finalCode(a.FinalCode), Invites: a.Invites,
		AuthChallenges: a.AuthChallenges, PDDms: ms(a.PDD()), SetupMs: ms(a.Setup()), DurationMs: ms(a.Duration())}
	if a.StatusText != "" {
		r.StatusText = &a.StatusText
	}
	if a.FinalCode != 0 {
		reason := untrusted.Text(a.FinalReason)
		r.FinalReason = &reason
	}
	return r
}

var triageCall = tool[triageIn, triageOut]{
	name:  "triage_call",
	reads: readsSIP | readsMedia,
	desc:  "Why a call ended as it did, per call attempt: outcome, final code and its standard meaning, the cause in the sender's words and its source, timings, problem aliases and hints.",
	hints: readOnly(),
	text:  []textSource{textSIP},
	run: func(c *call, in triageIn) (triageOut, error) {
		sn := c.d.SIP.Snapshot()
		dl, err := lookupDialog(sn, in.CallID)
		if err != nil {
			return triageOut{}, err
		}
		tr := sip.TriageCall(dl)
		out := triageOut{CallID: tr.CallID, Outcome: tr.Outcome, FinalCode: finalCode(tr.FinalCode), CauseFrom: tr.CauseFrom,
			PDDms: ms(dl.PDD()), SetupMs: ms(dl.Setup()), DurationMs: ms(dl.Duration()), Problems: tr.Problems, Hints: tr.Hints,
			Attempts: make([]attemptRow, 0, len(tr.Attempts))}
		if a := tr.Last; a != nil {
			out.PDDms, out.SetupMs, out.DurationMs = ms(a.PDD()), ms(a.Setup()), ms(a.Duration())
		}
		for i := range tr.Attempts {
			out.Attempts = append(out.Attempts, attemptRowOf(&tr.Attempts[i]))
		}
		if tr.StatusText != "" {
			out.StatusText = &tr.StatusText
		}
		if tr.CauseFrom != sip.CauseNone {
			cause := untrusted.Text(tr.Cause)
			out.Cause = &cause
		}
		return out, nil
	},
}

// reportLimits are the dialog store's bounds, as get_capture_report shows them.
type reportLimits struct {
	Dialogs               int   `json:"dialogs"`
	MessagesPerDialog     int   `json:"messages_per_dialog"`
	TransactionsPerDialog int   `json:"transactions_per_dialog"`
	MessageBytes          int64 `json:"message_bytes"`
}

func reportLimitsOf(l sip.Limits) reportLimits {
	return reportLimits{Dialogs: l.Dialogs, MessagesPerDialog: l.MessagesPerDialog, TransactionsPerDialog: l.TransactionsPerDialog, MessageBytes: l.MessageBytes}
}

type reportOut struct {
	Store  storeStatsRow  `json:"store"`
	Limits reportLimits   `json:"limits"`
	States map[string]int `json:"dialogs_by_state"`
	// Streams and Decode are the SPAN analysers' counters; null, with
	// counters_reason, when no analyser reports them.
	Streams        *streamStatsRow `json:"streams"`
	Decode         *decodeStatsRow `json:"decode"`
	CountersReason string          `json:"counters_reason,omitempty" jsonschema:"why streams and decode are null"`
	Notes          []string        `json:"notes"`
}

var captureReport = tool[noArgs, reportOut]{
	name:  "get_capture_report",
	reads: readsSIP | readsMedia,
	desc:  "Capture-wide SIP counters: messages by method and response, dialogs by state, undecodable by reason, streams (TLS read with logged keys, else counted), decoder counters, the store's bounds and what they shed.",
	hints: readOnly(),
	run: func(c *call, _ noArgs) (reportOut, error) {
		sn := c.d.SIP.Snapshot()
		out := reportOut{Store: storeStatsRowOf(sn.Stats), Limits: reportLimitsOf(c.d.SIP.Limits()), States: sn.CountStates(), Notes: []string{}}
		ss, ds := c.d.SIPStats()
		streams, decode := streamStatsRowOf(ss), decodeStatsRowOf(ds)
		out.Streams, out.Decode = &streams, &decode
		if ss.TLSDecrypted > 0 {
			out.Notes = append(out.Notes, fmt.Sprintf("%d TLS streams were decrypted with logged keys: their SIP is in these counts, transport tls", ss.TLSDecrypted))
		}
		if unread := ss.TLS - min(ss.TLS, ss.TLSDecrypted); unread > 0 {
			out.Notes = append(out.Notes, fmt.Sprintf("%d TLS streams (of %d sessions) were not read as SIP: SIP they carried is not in these counts; "+
				"streams.tls_flows says why (no_keys: give the PBX's key log in tls.key_logs or store.data_dir)", unread, ss.TLSSessions))
		}
		return out, nil
	},
}
