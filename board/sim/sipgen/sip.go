package sipgen

import (
	"fmt"
	"strings"
)

const (
	crlf          = "\r\n"
	maxForwards   = 70 // RFC 3261 §8.1.1.6 recommended initial value
	branchCookie  = "z9hG4bK"
	allowedMethod = "INVITE, ACK, CANCEL, BYE, OPTIONS"
	sdpType       = "application/sdp"
)

// party is one side of a call.
type party struct {
	h     *host
	user  string // the extension dialled or calling
	tag   string // From/To tag this side owns
	media uint16 // RTP port offered in SDP
	sess  uint32 // SDP session id and version
}

func (p *party) uri() string     { return fmt.Sprintf("sip:%s@%s", p.user, p.h.ip) }
func (p *party) contact() string { return fmt.Sprintf("sip:%s@%s:%d", p.user, p.h.ip, sipPort) }

// request is one SIP request; responses are derived from it.
type request struct {
	method   string
	uri      string
	from, to *party // sender, receiver
	inDialog bool   // To carries the receiver's tag
	branch   string
	cseq     uint32
	callID   string
	contact  bool   // add the sender's Contact (dialog-creating requests)
	body     string // SDP or empty
}

func (q request) via() string {
	return fmt.Sprintf("Via: SIP/2.0/UDP %s:%d;branch=%s", q.from.h.ip, sipPort, q.branch)
}

func (q request) fromHeader() string {
	return fmt.Sprintf("From: <%s>;tag=%s", q.from.uri(), q.from.tag)
}

func (q request) toHeader(tagged bool) string {
	if tagged {
		return fmt.Sprintf("To: <%s>;tag=%s", q.to.uri(), q.to.tag)
	}
	return fmt.Sprintf("To: <%s>", q.to.uri())
}

// datagram renders the request as sent from its sender to its receiver.
func (q request) datagram() datagram {
	h := []string{
		q.via(),
		fmt.Sprintf("Max-Forwards: %d", maxForwards),
		q.fromHeader(),
		q.toHeader(q.inDialog),
		"Call-ID: " + q.callID,
		fmt.Sprintf("CSeq: %d %s", q.cseq, q.method),
	}
	if q.contact {
		h = append(h, fmt.Sprintf("Contact: <%s>", q.from.contact()), "Allow: "+allowedMethod)
	}
	h = append(h, "User-Agent: "+q.from.h.agent)
	start := fmt.Sprintf("%s %s SIP/2.0", q.method, q.uri)
	return datagram{
		src:     endpoint{q.from.h, sipPort},
		dst:     endpoint{q.to.h, sipPort},
		payload: render(start, h, q.body),
	}
}

// response renders the receiver's answer to q. Every response but 100
// carries the receiver's To tag (RFC 3261 §8.2.6.2); dialog-creating ones
// (180, 200 to INVITE) carry its Contact.
func (q request) response(code int, reason string, contact bool, body string) datagram {
	h := []string{
		q.via(),
		q.fromHeader(),
		q.toHeader(q.inDialog || code != 100),
		"Call-ID: " + q.callID,
		fmt.Sprintf("CSeq: %d %s", q.cseq, q.method),
	}
	if contact {
		h = append(h, fmt.Sprintf("Contact: <%s>", q.to.contact()))
	}
	h = append(h, "Server: "+q.to.h.agent)
	return datagram{
		src:     endpoint{q.to.h, sipPort},
		dst:     endpoint{q.from.h, sipPort},
		payload: render(fmt.Sprintf("SIP/2.0 %d %s", code, reason), h, body),
	}
}

// render joins a start line, headers and body; Content-Length is the exact
// byte length of body.
func render(start string, headers []string, body string) []byte {
	var b strings.Builder
	b.WriteString(start + crlf)
	for _, h := range headers {
		b.WriteString(h + crlf)
	}
	if body != "" {
		b.WriteString("Content-Type: " + sdpType + crlf)
	}
	fmt.Fprintf(&b, "Content-Length: %d%s%s", len(body), crlf, crlf)
	b.WriteString(body)
	return []byte(b.String())
}

// sdp is the audio offer or answer of p: PCMU and telephone-event, 20 ms.
func sdp(p *party) string {
	lines := []string{
		"v=0",
		fmt.Sprintf("o=%s %d %d IN IP4 %s", p.user, p.sess, p.sess, p.h.ip),
		"s=fieldtap",
		fmt.Sprintf("c=IN IP4 %s", p.h.ip),
		"t=0 0",
		fmt.Sprintf("m=audio %d RTP/AVP %d %d", p.media, ptPCMU, ptEvent),
		fmt.Sprintf("a=rtpmap:%d PCMU/%d", ptPCMU, clockRate),
		fmt.Sprintf("a=rtpmap:%d telephone-event/%d", ptEvent, clockRate),
		fmt.Sprintf("a=fmtp:%d 0-15", ptEvent),
		fmt.Sprintf("a=ptime:%d", ptime.Milliseconds()),
		"a=sendrecv",
	}
	return strings.Join(lines, crlf) + crlf
}
