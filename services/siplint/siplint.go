package siplint

import (
	"bytes"
	"fmt"
	"net/netip"
	"strings"

	"fieldtap/services/rtp"
	"fieldtap/services/sip"
)

// maxMediaViolations bounds rtp_on_unannounced_port's rows per dialog: a
// relay's every leg is a handful of streams; past that one row counts
// the rest.
const maxMediaViolations = 16

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

// Lint checks d. sn gives its messages (for bodies), media the RTP
// analyser's streams and the dialog's announced addresses (nil when the
// box has none); a rule that needs a message the store evicted,
// transactions it shed or media it never saw is not evaluated.
func Lint(sn *sip.Snapshot, d *sip.Dialog, media *rtp.Snapshot) Result {
	var r Result
	skip := func(id, why string) {
		r.NotEvaluated = append(r.NotEvaluated, NotEvaluated{Rule: mustRule(id), Reason: why})
	}
	hit := func(id string, cseq uint32, format string, a ...any) {
		r.Violations = append(r.Violations, Violation{Rule: mustRule(id), CSeq: cseq, Detail: fmt.Sprintf(format, a...)})
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
	if why := mediaRule(d, media, hit); why != "" {
		skip("rtp_on_unannounced_port", why)
	} else {
		r.Evaluated = append(r.Evaluated, "rtp_on_unannounced_port")
	}
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

// mediaRule reports RTP streams of the dialog going to an address:port
// no SDP of the dialog announced. A stream is the dialog's when the RTP
// analyser tied it to the Call-ID (one side announced); or, when no SDP
// of any dialog announced either side (an orphan, tracked only with
// heuristic RTP on) and it ran while the dialog lived, when it carries
// the SSRC of one of the dialog's streams (a relay copying it) or both
// its hosts are the dialog's (announced media hosts or signalling
// participants): that is the correlation by endpoints. It returns why it
// could not evaluate, or "".
func mediaRule(d *sip.Dialog, media *rtp.Snapshot, hit func(string, uint32, string, ...any)) string {
	if media == nil {
		return "this box has no RTP analyser"
	}
	dv := media.Dialogs[d.CallID]
	if dv == nil || len(dv.Endpoints) == 0 {
		return "no SDP of this dialog announced a media address"
	}
	if dv.EndpointsDropped > 0 {
		return fmt.Sprintf("%d announced media addresses past the per-dialog bound were not kept", dv.EndpointsDropped)
	}
	announced := map[netip.AddrPort]bool{}
	hosts := map[netip.Addr]bool{}
	for _, e := range dv.Endpoints {
		ap, err := netip.ParseAddrPort(e)
		if err != nil {
			return fmt.Sprintf("announced address %q does not parse: %v", e, err)
		}
		announced[ap] = true
		hosts[ap.Addr()] = true
	}
	for _, p := range d.Participants {
		hosts[p.Addr().Unmap()] = true
	}
	lived := func(s rtp.StreamView) bool {
		return !s.Last.Before(d.Created) && (!s.First.After(d.Updated) || !d.ByeSeen)
	}
	ssrcs := map[uint32]bool{}
	for _, s := range media.Streams {
		if s.CallID == d.CallID {
			ssrcs[s.Key.SSRC] = true
		}
	}
	n := 0
	for _, s := range media.Streams {
		src, dst := s.Key.Src, s.Key.Dst
		how := "tied to the call by its source"
		switch {
		case s.CallID == d.CallID:
		case s.CallID != "" || !lived(s):
			continue
		case ssrcs[s.Key.SSRC]:
			how = "an orphan carrying the SSRC of one of the call's streams while the call lived"
		case hosts[src.Addr().Unmap()] && hosts[dst.Addr().Unmap()]:
			how = "an orphan between the dialog's hosts while it lived"
		default:
			continue
		}
		if announced[dst] {
			continue
		}
		if n++; n > maxMediaViolations {
			continue
		}
		hit("rtp_on_unannounced_port", 0, "RTP stream %s (%d packets) %s -> %s, %s: no SDP of the dialog announced %s (announced: %s)",
			s.ID, s.Packets, src, dst, how, dst, strings.Join(dv.Endpoints, ", "))
	}
	if n > maxMediaViolations {
		hit("rtp_on_unannounced_port", 0, "%d more streams on unannounced ports, not listed", n-maxMediaViolations)
	}
	return ""
}
