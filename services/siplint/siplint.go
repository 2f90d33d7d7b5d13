package siplint

import (
	"bytes"
	"fmt"

	"fieldtap/services/sip"
)

// Rule is one check and where the requirement is written.
type Rule struct {
	ID, RFC, Section, Summary string
}

// Rules, in the order Lint reports them.
var Rules = []Rule{
	{ID: "missing_ack", RFC: "RFC 3261", Section: "13.2.2.4, 17.1.1.3", Summary: "every final response to an INVITE is acknowledged by an ACK with the INVITE's CSeq number"},
	{ID: "reinvite_glare", RFC: "RFC 3261", Section: "14.1", Summary: "a UA does not send a re-INVITE while another INVITE transaction in the dialog is in progress (491 Request Pending answers the loser)"},
	{ID: "cancel_without_provisional", RFC: "RFC 3261", Section: "9.1", Summary: "a CANCEL is not sent before a provisional response to the request it cancels"},
	{ID: "sdp_answer_without_offer", RFC: "RFC 3264 / RFC 6337", Section: "RFC 6337 §2.1, RFC 3261 §13.2.1", Summary: "an ACK carries SDP only as the answer to an offer made in the 2xx; after an offer in the INVITE it carries none"},
	{ID: "rtp_on_unannounced_port", RFC: "RFC 3264", Section: "5, 6", Summary: "media flows to the addresses and ports an SDP offer or answer announced"},
}

// Violation is one rule broken, with the transaction behind it.
type Violation struct {
	Rule   Rule
	CSeq   uint32
	Detail string // the box's own words
}

// NotEvaluated is a rule Lint could not check on this dialog, and why.
type NotEvaluated struct {
	Rule   Rule
	Reason string
}

// Result is one dialog's lint.
type Result struct {
	Evaluated    []string // rule ids checked
	Violations   []Violation
	NotEvaluated []NotEvaluated
}

// Lint checks d. sn gives its messages (for bodies); a rule that needs a
// message the store evicted, or transactions it shed, is not evaluated.
func Lint(sn *sip.Snapshot, d *sip.Dialog) Result {
	var r Result
	byID := map[string]Rule{}
	for _, ru := range Rules {
		byID[ru.ID] = ru
	}
	skip := func(id, why string) {
		r.NotEvaluated = append(r.NotEvaluated, NotEvaluated{Rule: byID[id], Reason: why})
	}
	hit := func(id string, cseq uint32, format string, a ...any) {
		r.Violations = append(r.Violations, Violation{Rule: byID[id], CSeq: cseq, Detail: fmt.Sprintf(format, a...)})
	}
	txnRules := []string{"missing_ack", "reinvite_glare", "cancel_without_provisional"}
	if d.TxnsShed > 0 {
		for _, id := range txnRules {
			skip(id, fmt.Sprintf("%d transactions past the per-dialog bound were not kept", d.TxnsShed))
		}
	} else {
		r.Evaluated = append(r.Evaluated, txnRules...)
		lintTransactions(d, hit)
	}
	if why := sdpRule(sn, d, hit); why != "" {
		skip("sdp_answer_without_offer", why)
	} else {
		r.Evaluated = append(r.Evaluated, "sdp_answer_without_offer")
	}
	skip("rtp_on_unannounced_port", "not implemented here: it needs the media analyser's per-dialog announced addresses beside its orphan streams")
	return r
}

func lintTransactions(d *sip.Dialog, hit func(string, uint32, string, ...any)) {
	acks := map[uint32]bool{}
	for _, tx := range d.Txns {
		if tx.Method == "ACK" {
			acks[tx.CSeq] = true
		}
	}
	var invites []sip.Transaction
	for _, tx := range d.Txns {
		if tx.Method == "INVITE" {
			invites = append(invites, tx)
		}
	}
	for _, tx := range invites {
		if tx.FinalCode >= 200 && !acks[tx.CSeq] {
			hit("missing_ack", tx.CSeq, "INVITE CSeq %d got a final %d and no ACK with CSeq %d was seen", tx.CSeq, tx.FinalCode, tx.CSeq)
		}
		if tx.FinalCode == 491 {
			hit("reinvite_glare", tx.CSeq, "INVITE CSeq %d was answered 491 Request Pending: two INVITEs crossed", tx.CSeq)
		}
	}
	// Two in-dialog INVITEs from opposite sides overlapping in time.
	for i, a := range invites {
		for _, b := range invites[i+1:] {
			if !a.InDialog || !b.InDialog || a.Src == b.Src || a.FinalCode == 491 || b.FinalCode == 491 {
				continue
			}
			if a.FinalAt.IsZero() || b.Start.Before(a.FinalAt) {
				hit("reinvite_glare", b.CSeq, "re-INVITE CSeq %d from %s started while CSeq %d from %s had no final response", b.CSeq, b.Src, a.CSeq, a.Src)
			}
		}
	}
	for _, c := range d.Txns {
		if c.Method != "CANCEL" {
			continue
		}
		for _, inv := range invites {
			if inv.CSeq != c.CSeq {
				continue
			}
			if !inv.Provisional.IsZero() && !c.Start.Before(inv.Provisional) {
				continue
			}
			hit("cancel_without_provisional", c.CSeq, "CANCEL CSeq %d was sent before any provisional response to its INVITE", c.CSeq)
		}
	}
}

// sdpRule reports ACKs with SDP after an INVITE that made the offer; it
// returns why it could not evaluate, or "".
func sdpRule(sn *sip.Snapshot, d *sip.Dialog, hit func(string, uint32, string, ...any)) string {
	if d.MessagesShed > 0 {
		return fmt.Sprintf("%d messages past the per-dialog cap were not kept", d.MessagesShed)
	}
	offer := map[uint32]bool{} // INVITE CSeq → the INVITE carried SDP
	var m sip.Parsed
	for _, seq := range d.Messages() {
		msg, ok := sn.Message(seq)
		if !ok {
			return "a message of the dialog was evicted by the store's byte bound: its body is gone"
		}
		if !msg.Request || msg.Retransmission || m.Parse(msg.Raw) != nil || !hasSDP(&m) {
			continue
		}
		switch msg.Method {
		case "INVITE":
			offer[msg.CSeq] = true
		case "ACK":
			if offer[msg.CSeq] {
				hit("sdp_answer_without_offer", msg.CSeq, "the ACK for CSeq %d carries SDP although the INVITE made the offer and its answer came in the response", msg.CSeq)
			}
		}
	}
	return ""
}

func hasSDP(m *sip.Parsed) bool {
	return len(m.Body) > 0 && bytes.Contains(bytes.ToLower(m.Get(sip.HContentType)), []byte("application/sdp"))
}
