package mcp

import (
	"fmt"
	"net/http"

	"fieldtap/services/filter"
	"fieldtap/services/sip"
)

// triage explains one dialog's outcome from store facts only.
func triage(dl *sip.Dialog, problems map[string]*filter.Expr) triageOut {
	out := triageOut{CallID: dl.CallID, Problems: []string{}, Hints: []string{},
		PDDms: ms(dl.PDD()), SetupMs: ms(dl.Setup()), DurationMs: ms(dl.Duration())}
	if dl.FinalCode != 0 {
		c := dl.FinalCode
		out.FinalCode = &c
	}
	for _, n := range sip.ProblemNames() {
		if problems[n].Match(dl) {
			out.Problems = append(out.Problems, n)
		}
	}
	switch {
	case dl.FirstMethod != "INVITE":
		out.Outcome = "not_a_call"
	case dl.State == sip.StateEnded:
		out.Outcome = "ended"
	case dl.State == sip.StateAnswered:
		out.Outcome = "answered"
	case dl.State == sip.StateCancelled:
		out.Outcome = "cancelled"
	case dl.State == sip.StateFailed:
		out.Outcome = "failed"
	default:
		out.Outcome = "in_progress"
	}
	switch {
	case dl.ReasonHeader != "":
		out.Cause, out.CauseFrom = dl.ReasonHeader, "reason_header"
	case dl.FinalCode != 0:
		text := dl.FinalReason
		if text == "" {
			text = http.StatusText(dl.FinalCode) // only a fallback: SIP and HTTP share most 4xx texts
		}
		out.Cause, out.CauseFrom = fmt.Sprintf("%d %s", dl.FinalCode, text), "status"
	default:
		out.CauseFrom = "none"
	}
	hint := func(s string) { out.Hints = append(out.Hints, s) }
	switch c := dl.FinalCode; {
	case c == 401 || c == 407:
		hint("the last answer was an authentication challenge: the caller did not retry with credentials")
	case c == 403:
		hint("403: the server refused the request; check the account's permissions and dial plan")
	case c == 404:
		hint("404: the called number or user is unknown to the server")
	case c == 408:
		hint("408: a hop timed out; check reachability of the next hop")
	case c == 480 || c == 486 || c == 600 || c == 603:
		hint("the callee was unavailable, busy or declined: not a network fault")
	case c == 487:
		hint("487: the caller cancelled before an answer")
	case c == 488 || c == 606:
		hint("488/606: no acceptable media; compare the SDP offer's codecs and addresses (get_message on the INVITE)")
	case c >= 500 && c < 600:
		hint("5xx: a server failed; look at the responding hop (src of the final response)")
	}
	if dl.AuthChallenge > 0 && dl.FinalCode != 401 && dl.FinalCode != 407 {
		hint(fmt.Sprintf("%d authentication challenge(s) preceded the final answer (normal once per call)", dl.AuthChallenge))
	}
	if dl.Retransmits > 0 {
		hint(fmt.Sprintf("%d retransmitted messages: a peer answered late or not at all", dl.Retransmits))
	}
	if dl.FirstMethod == "INVITE" && dl.FinalCode >= 200 && dl.FinalCode < 300 && !dl.AckSeen {
		hint("answered but no ACK seen: the 200 OK may not have reached the caller (NAT or routing on the response path)")
	}
	if out.Outcome == "in_progress" {
		hint("no final response yet: the call may still be ringing, or the capture ended first")
	}
	return out
}
