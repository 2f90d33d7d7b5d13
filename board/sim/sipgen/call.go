package sipgen

import "time"

// msgKind names one SIP message of a call's ladder.
type msgKind uint8

const (
	msgInvite msgKind = iota
	msgTrying
	msgRinging
	msgAnswer // 200 OK to the INVITE, with the SDP answer
	msgAck    // ACK for the 200: a transaction of its own
	msgBye
	msgByeOK
	msgBusy
	msgNotFound
	msgCancel
	msgCancelOK
	msgTerminated // 487 to the INVITE after CANCEL
	msgFailureAck // ACK for a non-2xx final: part of the INVITE transaction
)

// step is one SIP message at an offset from the call's start.
type step struct {
	at  time.Duration
	msg msgKind
}

// call is one planned call: identities, ladder and media.
type call struct {
	start          time.Duration // offset from Options.Start
	caller, callee *party
	callID         string
	inviteBranch   string
	ackBranch      string
	byeBranch      string
	cseq           uint32 // the caller's INVITE CSeq
	calleeCSeq     uint32 // the callee's first CSeq, used if it hangs up
	calleeHangsUp  bool
	steps          []step
	media          []*rtpStream // both directions when answered
}

func (c *call) invite() request {
	return request{
		method: "INVITE", uri: c.callee.uri(), from: c.caller, to: c.callee,
		branch: c.inviteBranch, cseq: c.cseq, callID: c.callID,
		contact: true, body: sdp(c.caller),
	}
}

// inviteTxn is a request of the INVITE transaction (CANCEL, non-2xx ACK).
func (c *call) inviteTxn(method string, inDialog bool) request {
	return request{
		method: method, uri: c.callee.uri(), from: c.caller, to: c.callee,
		inDialog: inDialog, branch: c.inviteBranch, cseq: c.cseq, callID: c.callID,
	}
}

func (c *call) ack() request {
	return request{
		method: "ACK", uri: c.callee.contact(), from: c.caller, to: c.callee,
		inDialog: true, branch: c.ackBranch, cseq: c.cseq, callID: c.callID,
	}
}

func (c *call) bye() request {
	q := request{
		method: "BYE", uri: c.callee.contact(), from: c.caller, to: c.callee,
		inDialog: true, branch: c.byeBranch, cseq: c.cseq + 1, callID: c.callID,
	}
	if c.calleeHangsUp {
		q.uri, q.from, q.to, q.cseq = c.caller.contact(), c.callee, c.caller, c.calleeCSeq
	}
	return q
}

// message renders one message of the ladder.
func (c *call) message(k msgKind) datagram {
	switch k {
	case msgInvite:
		return c.invite().datagram()
	case msgTrying:
		return c.invite().response(100, "Trying", false, "")
	case msgRinging:
		return c.invite().response(180, "Ringing", true, "")
	case msgAnswer:
		return c.invite().response(200, "OK", true, sdp(c.callee))
	case msgAck:
		return c.ack().datagram()
	case msgBye:
		return c.bye().datagram()
	case msgByeOK:
		return c.bye().response(200, "OK", false, "")
	case msgBusy:
		return c.invite().response(486, "Busy Here", false, "")
	case msgNotFound:
		return c.invite().response(404, "Not Found", false, "")
	case msgCancel:
		return c.inviteTxn("CANCEL", false).datagram()
	case msgCancelOK:
		return c.inviteTxn("CANCEL", false).response(200, "OK", false, "")
	case msgTerminated:
		return c.invite().response(487, "Request Terminated", false, "")
	default: // msgFailureAck
		return c.inviteTxn("ACK", true).datagram()
	}
}

// sipStream yields a call's SIP messages in time order.
type sipStream struct {
	c *call
	i int
}

func (s *sipStream) peek() (time.Duration, bool) {
	if s.i >= len(s.c.steps) {
		return 0, false
	}
	return s.c.start + s.c.steps[s.i].at, true
}

func (s *sipStream) pop() datagram {
	d := s.c.message(s.c.steps[s.i].msg)
	s.i++
	return d
}
