package siplint

import (
	"fieldtap/services/sipsecurity"
)

// Severity says how much a broken rule matters in the field.
type Severity string

// Severities, worst first.
const (
	// SevError: a peer that follows the RFC may refuse or misroute the
	// message, or the call breaks.
	SevError Severity = "error"
	// SevWarning: the message works with most peers but breaks a MUST or
	// SHOULD that some enforce.
	SevWarning Severity = "warning"
	// SevInfo: not a protocol fault; worth a look (an attack pattern).
	SevInfo Severity = "info"
)

// Checkers: which tool evaluates a rule.
const (
	ByLint     = "lint_dialog"
	ByValidate = "validate_message"
	BySecurity = "sip_security_findings"
)

// Rule is one check: what it looks at, where the requirement is written,
// how bad breaking it is, and what to change. Rules is the one table
// the linters report from and explain_rule answers from, so they cannot
// disagree.
type Rule struct {
	ID       string
	Checker  string // ByLint, ByValidate or BySecurity
	RFC      string
	Section  string
	Severity Severity
	Summary  string // what the rule checks
	Fix      string // what to change on the sender
}

// Rules, lint_dialog's first in the order Lint reports them.
var Rules = []Rule{
	{ID: "missing_ack", Checker: ByLint, RFC: "RFC 3261", Section: "13.2.2.4, 17.1.1.3", Severity: SevError,
		Summary: "every final response to an INVITE is acknowledged by an ACK with the INVITE's CSeq number",
		Fix:     "make the UAC send ACK for every final response (2xx end to end, non-2xx hop by hop); check that the 2xx's Contact and Record-Route reach the caller, or the ACK goes nowhere"},
	{ID: "reinvite_glare", Checker: ByLint, RFC: "RFC 3261", Section: "14.1", Severity: SevWarning,
		Summary: "a UA does not send a re-INVITE while another INVITE transaction in the dialog is in progress (491 Request Pending answers the loser)",
		Fix:     "on 491 retry after the random back-off of §14.1 (2.1-4 s for the Call-ID owner, 0-2 s otherwise); avoid timed session refreshes from both sides (RFC 4028 refresher)"},
	{ID: "cancel_without_provisional", Checker: ByLint, RFC: "RFC 3261", Section: "9.1", Severity: SevWarning,
		Summary: "a CANCEL is not sent before a provisional response to the request it cancels",
		Fix:     "hold the CANCEL until a provisional response arrives (or the INVITE times out); a CANCEL that races the 100 can cross the INVITE and leave the callee ringing"},
	{ID: "sdp_answer_without_offer", Checker: ByLint, RFC: "RFC 3264 / RFC 6337", Section: "RFC 6337 §2.1, RFC 3261 §13.2.1", Severity: SevError,
		Summary: "an ACK carries SDP only as the answer to an offer made in the 2xx; after an offer in the INVITE it carries none",
		Fix:     "send SDP in the ACK only when the INVITE had none and the 2xx made the offer; otherwise leave the ACK's body empty"},
	{ID: "rtp_on_unannounced_port", Checker: ByLint, RFC: "RFC 3264", Section: "5.1, 6.1", Severity: SevWarning,
		Summary: "RTP between the dialog's media hosts goes to an address and port an SDP offer or answer of the dialog announced (the m= port and c= address where that side receives)",
		Fix:     "a NAT or a media relay rewrote the port: enable the PBX's NAT handling (symmetric RTP / comedia, rport) or have the phone announce its public address (STUN, ICE); a relay leg the capture saw from one side only is expected"},

	{ID: "mandatory_header_missing", Checker: ByValidate, RFC: "RFC 3261", Section: "8.1.1, 8.2.6.2, 20", Severity: SevError,
		Summary: "a request carries Via, From, To, Call-ID, CSeq and Max-Forwards; a response carries Via, From, To, Call-ID and CSeq",
		Fix:     "add the missing header; a proxy that strips or a UA that forgets one is refused by strict peers with 400 Bad Request"},
	{ID: "contact_missing", Checker: ByValidate, RFC: "RFC 3261", Section: "8.1.1.8, 12.1.1", Severity: SevError,
		Summary: "an INVITE, and a 2xx answering an INVITE, carry a Contact with a single SIP or SIPS URI (the dialog's remote target)",
		Fix:     "add a Contact with the UA's reachable URI; without it the peer cannot send the ACK, BYE or re-INVITE"},
	{ID: "cseq_method_mismatch", Checker: ByValidate, RFC: "RFC 3261", Section: "8.1.1.5", Severity: SevError,
		Summary: "a request's CSeq method is the request method",
		Fix:     "set the CSeq method to the start line's method (an ACK or CANCEL uses ACK or CANCEL, not INVITE)"},
	{ID: "content_length_mismatch", Checker: ByValidate, RFC: "RFC 3261", Section: "18.3, 20.14", Severity: SevError,
		Summary: "Content-Length is the body's size in bytes; it is present on stream transports (TCP, TLS)",
		Fix:     "compute Content-Length after the body is final (an SBC or ALG that rewrites SDP must fix it); over TCP a wrong value breaks framing of every later message"},
	{ID: "from_tag_missing", Checker: ByValidate, RFC: "RFC 3261", Section: "8.1.1.3, 19.3", Severity: SevError,
		Summary: "the From header carries a tag parameter",
		Fix:     "have the UAC add a random From tag to every new request; responses copy it"},
	{ID: "to_tag_missing", Checker: ByValidate, RFC: "RFC 3261", Section: "8.2.6.2, 12.2.1.1, 15.1.1", Severity: SevError,
		Summary: "a response other than 100 Trying carries a To tag, and a BYE (an in-dialog request) carries one",
		Fix:     "have the UAS add a To tag to every response but 100 and keep it for the dialog; in-dialog requests copy the remote tag"},
	{ID: "via_branch_cookie", Checker: ByValidate, RFC: "RFC 3261", Section: "8.1.1.7", Severity: SevWarning,
		Summary: "each Via carries a branch parameter starting with the magic cookie z9hG4bK",
		Fix:     "generate branches as z9hG4bK plus a random string unique per transaction; without the cookie peers fall back to RFC 2543 transaction matching"},
	{ID: "sdp_line_syntax", Checker: ByValidate, RFC: "RFC 4566", Section: "5", Severity: SevError,
		Summary: "every SDP line is <type>=<value>, type one lower-case letter, no whitespace around =",
		Fix:     "fix the generator: SDP parsers drop the whole body on a malformed line"},
	{ID: "sdp_required_line_missing", Checker: ByValidate, RFC: "RFC 4566", Section: "5, 5.1, 5.2, 5.3, 5.9", Severity: SevError,
		Summary: "an SDP body starts v=0, then o= (six fields), s=, and has at least one t= before the first m=",
		Fix:     "emit the mandatory session lines (s=- is a valid empty name, t=0 0 an unbounded session)"},
	{ID: "sdp_line_order", Checker: ByValidate, RFC: "RFC 4566", Section: "5", Severity: SevWarning,
		Summary: "session lines come in the order v o s i u e p c b t r z k a, media lines in the order m i c b k a",
		Fix:     "emit lines in the grammar's order; strict parsers refuse a c= after t= or an a= before c="},
	{ID: "sdp_connection_missing", Checker: ByValidate, RFC: "RFC 4566", Section: "5.7", Severity: SevError,
		Summary: "a c= line is at session level or in every m= section",
		Fix:     "add a session-level c= (or one per m= section) with the address where the media is received"},

	{ID: sipsecurity.KindScanner, Checker: BySecurity, RFC: "RFC 3261", Section: "20.41 (User-Agent)", Severity: SevInfo,
		Summary: "a dialog whose User-Agent or Server names a known SIP scanner (SIPVicious friendly-scanner, sipcli, …); the RFC defines the header, the list is the box's",
		Fix:     "block the source at the edge (SBC or firewall); make sure its REGISTERs got 401/403 and no call was answered"},
	{ID: sipsecurity.KindRegisterFlood, Checker: BySecurity, RFC: "RFC 3261", Section: "10.2", Severity: SevInfo,
		Summary: "one source sent more REGISTER transactions in the window than the configured threshold (a phone re-registers every few minutes)",
		Fix:     "rate-limit REGISTER per source (pike, fail2ban); look for a misconfigured expiry or a registration loop"},
	{ID: sipsecurity.KindAuthStorm, Checker: BySecurity, RFC: "RFC 3261 / RFC 8760", Section: "RFC 3261 §22.2, §22.3", Severity: SevInfo,
		Summary: "one source drew more 401/407 challenges in the window than the threshold: a client guessing passwords",
		Fix:     "lock out the source after failed digests, use long random SIP passwords, answer unknown users exactly like wrong passwords"},
	{ID: sipsecurity.KindInviteFlood, Checker: BySecurity, RFC: "RFC 3261 / RFC 5390", Section: "RFC 3261 §13.2.1; RFC 5390 §4", Severity: SevInfo,
		Summary: "one source sent more out-of-dialog INVITEs in the window than the threshold (toll fraud, a flood, or a busy trunk)",
		Fix:     "rate-limit INVITEs per source; if it is a trunk, raise sip_security.invites for it"},
	{ID: sipsecurity.KindOptionsSweep, Checker: BySecurity, RFC: "RFC 3261", Section: "11", Severity: SevInfo,
		Summary: "one source sent OPTIONS to more distinct targets in the window than the threshold (a svmap sweep)",
		Fix:     "drop OPTIONS from unknown sources at the edge; answer none from the public side"},
}

// RuleByID returns the rule with id.
func RuleByID(id string) (Rule, bool) {
	for _, r := range Rules {
		if r.ID == id {
			return r, true
		}
	}
	return Rule{}, false
}

// RuleIDs lists every rule id in table order.
func RuleIDs() []string {
	ids := make([]string, 0, len(Rules))
	for _, r := range Rules {
		ids = append(ids, r.ID)
	}
	return ids
}

// rulesOf lists the rules checker evaluates.
func rulesOf(checker string) []Rule {
	var out []Rule
	for _, r := range Rules {
		if r.Checker == checker {
			out = append(out, r)
		}
	}
	return out
}

// mustRule is RuleByID for the checkers' own ids: a typo panics in the
// first test.
func mustRule(id string) Rule {
	r, ok := RuleByID(id)
	if !ok {
		panic("siplint: no rule " + id)
	}
	return r
}
