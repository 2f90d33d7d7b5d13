package sip

import (
	"fmt"
)

// Call outcomes, as TriageCall names them.
const (
	OutcomeAnswered   = "answered"
	OutcomeEnded      = "ended"
	OutcomeFailed     = "failed"
	OutcomeCancelled  = "cancelled"
	OutcomeInProgress = "in_progress"
	OutcomeNotACall   = "not_a_call"
)

// Where TriageCall found a call's cause.
const (
	CauseReasonHeader = "reason_header" // an RFC 3326 Reason header (a Q.850 cause, often)
	CauseStatus       = "status"        // the final response's reason phrase
	CauseNone         = "none"          // neither was captured
)

// Triage explains why one call ended the way it did, from store facts
// only. Cause is the sender's own words (sender text); StatusText is the
// box's meaning of FinalCode, which a reason phrase may contradict. The
// call is judged by its last attempt; Attempts lists every one.
type Triage struct {
	CallID     string
	Outcome    string
	FinalCode  int    // 0 while none
	StatusText string // StatusText(FinalCode); "" when none or unknown
	Cause      string // sender text; "" with CauseFrom CauseNone
	CauseFrom  string
	Problems   []string // the problem aliases the dialog matches, in ProblemNames order
	Hints      []string // what the facts suggest, in plain words
	Attempts   []AttemptOutcome
	// Last is the attempt the outcome is of; nil without an INVITE.
	Last *Attempt
}

// AttemptOutcome is one call attempt's outcome.
type AttemptOutcome struct {
	Attempt
	Outcome    string
	StatusText string
}

// TriageCall triages d.
func TriageCall(d *Dialog) Triage {
	out := Triage{CallID: d.CallID, Problems: MatchProblems(d, ProblemNames()), Hints: []string{}, Attempts: []AttemptOutcome{}}
	// The facts judged: the last attempt's, or the dialog's without one.
	code, reason, state, auth, ack := d.FinalCode, d.FinalReason, d.State, d.AuthChallenge, d.AckSeen
	as := d.Attempts()
	for i := range as {
		out.Attempts = append(out.Attempts, AttemptOutcome{Attempt: as[i], Outcome: outcome(true, as[i].State), StatusText: StatusText(as[i].FinalCode)})
	}
	if len(as) > 0 {
		a := &as[len(as)-1]
		out.Last = a
		code, reason, state, auth, ack = a.FinalCode, a.FinalReason, a.State, a.AuthChallenges, a.AckSeen
	}
	out.FinalCode, out.StatusText, out.Outcome = code, StatusText(code), outcome(d.HasInvite, state)
	switch {
	case d.ReasonHeader != "":
		out.Cause, out.CauseFrom = d.ReasonHeader, CauseReasonHeader
	case code != 0 && reason != "":
		out.Cause, out.CauseFrom = reason, CauseStatus
	default:
		out.CauseFrom = CauseNone
	}
	hint := func(format string, a ...any) { out.Hints = append(out.Hints, fmt.Sprintf(format, a...)) }
	if len(as) > 1 {
		hint("%d call attempts on this Call-ID: the outcome is the last one's; attempts lists each", len(as))
	}
	switch c := code; {
	case c == 401 || c == 407:
		hint("the last answer was an authentication challenge: the caller did not retry with credentials")
	case c == 403:
		hint("403: the server refused the request; check the account's permissions and dial plan")
	case c == 404:
		hint("404: the called number or user is unknown to the server")
	case c == 408:
		hint("408: a hop timed out; check reachability of the next hop")
	case c == 480 || c == 486 || c == 600 || c == 603:
		hint("%d: the callee was unavailable, busy or declined: not a network fault", c)
	case c == 487:
		hint("487: the caller cancelled before an answer")
	case c == 488 || c == 606:
		hint("%d: no acceptable media; compare the SDP offer's codecs and addresses (check_codec_negotiation, get_message on the INVITE)", c)
	case c >= 500 && c < 600:
		hint("%d: a server failed; look at the responding hop (src of the final response)", c)
	}
	if auth > 0 && code != 401 && code != 407 {
		hint("%d authentication challenge(s) preceded the final answer (normal once per call)", auth)
	}
	if d.Retransmits > 0 {
		hint("%d retransmitted messages: a peer answered late or not at all", d.Retransmits)
	}
	if d.HasInvite && code >= 200 && code < 300 && !ack {
		hint("answered but no ACK seen: the 200 OK may not have reached the caller (NAT or routing on the response path)")
	}
	if out.Outcome == OutcomeInProgress {
		hint("no final response yet: the call may still be ringing, or the capture ended first")
	}
	if d.TxnsShed > 0 {
		hint("%d transactions past the per-dialog bound were counted but not kept: later attempts may be missing", d.TxnsShed)
	}
	return out
}

func outcome(isCall bool, state string) string {
	switch {
	case !isCall:
		return OutcomeNotACall
	case state == StateEnded:
		return OutcomeEnded
	case state == StateAnswered:
		return OutcomeAnswered
	case state == StateCancelled:
		return OutcomeCancelled
	case state == StateFailed:
		return OutcomeFailed
	}
	return OutcomeInProgress
}
