package siplint

import (
	"bytes"
	"fmt"
	"strings"

	"fieldtap/services/sip"
	"fieldtap/services/srtp"
)

// Bounds of one validation.
const (
	// MaxFindings bounds the findings of one message; past it one more
	// finding counts the rest. A message can break each header rule once
	// and each SDP rule once per line, so 32 is well past any real one.
	MaxFindings = 32
	// maxEvidence caps one evidence excerpt; an answer's fence caps at
	// 256 bytes too, with a mark, and this keeps the cut on our side.
	maxEvidence = 200
	// viaCookie is RFC 3261 §8.1.1.7's magic cookie.
	viaCookie = "z9hG4bK"
)

// Finding is one rule a message breaks: the box's words in Detail, and in
// Evidence the sender's text it was read from (a header value, an SDP
// line), as written: an answer that shows it fences it.
type Finding struct {
	Rule     Rule
	Detail   string
	Evidence string
}

// Validation is one message checked.
type Validation struct {
	Evaluated    []string
	Findings     []Finding
	More         int // findings past MaxFindings
	NotEvaluated []NotEvaluated
}

// Validate checks one stored SIP message (raw, as captured) against
// RFC 3261's syntax rules that matter in the field and, when its body is
// application/sdp, against RFC 4566's line grammar. transport is the
// store's ("udp", "tcp", "tls", "ws"): Content-Length is mandatory on
// stream transports only. A message that does not parse at all is an
// error; Validate never panics.
func Validate(raw []byte, transport string) (Validation, error) {
	var m sip.Parsed
	if err := m.Parse(raw); err != nil {
		return Validation{}, fmt.Errorf("the message does not parse: %w", err)
	}
	var v Validation
	hit := func(id, ev, format string, a ...any) {
		if len(v.Findings) >= MaxFindings {
			v.More++
			return
		}
		if r, n := srtp.Redact([]byte(ev)); n > 0 { // SDES keys never leave the box
			ev = string(r)
		}
		if len(ev) > maxEvidence {
			ev = strings.ToValidUTF8(ev[:maxEvidence], "") + "…"
		}
		v.Findings = append(v.Findings, Finding{Rule: mustRule(id), Detail: fmt.Sprintf(format, a...), Evidence: ev})
	}
	skip := func(id, why string) {
		v.NotEvaluated = append(v.NotEvaluated, NotEvaluated{Rule: mustRule(id), Reason: why})
	}
	eval := func(id string) { v.Evaluated = append(v.Evaluated, id) }
	method := string(m.Method)
	if !m.Request {
		method = string(m.CSeqMethod)
	}

	// Mandatory headers: RFC 3261 §8.1.1 for requests; a response copies
	// Via, From, To, Call-ID and CSeq (§8.2.6.2).
	eval("mandatory_header_missing")
	mandatory := []struct {
		id   sip.HeaderID
		name string
	}{{sip.HVia, "Via"}, {sip.HFrom, "From"}, {sip.HTo, "To"}, {sip.HCallID, "Call-ID"}, {sip.HCSeq, "CSeq"}}
	if m.Request {
		mandatory = append(mandatory, struct {
			id   sip.HeaderID
			name string
		}{sip.HMaxForwards, "Max-Forwards"})
	}
	for _, h := range mandatory {
		if !m.Has(h.id) {
			hit("mandatory_header_missing", "", "no %s header", h.name)
		}
	}

	// Contact: RFC 3261 §8.1.1.8 (INVITE) and §12.1.1 (2xx to INVITE).
	if method == "INVITE" && (m.Request || m.StatusCode/100 == 2) {
		eval("contact_missing")
		if !m.Has(sip.HContact) {
			if m.Request {
				hit("contact_missing", "", "an INVITE without a Contact")
			} else {
				hit("contact_missing", "", "a %d to an INVITE without a Contact", m.StatusCode)
			}
		}
	} else {
		skip("contact_missing", "applies to an INVITE and a 2xx answering one")
	}

	// CSeq method: RFC 3261 §8.1.1.5.
	switch {
	case !m.Request:
		skip("cseq_method_mismatch", "a response's CSeq names its request's method, which one message cannot show")
	case !m.Has(sip.HCSeq):
		skip("cseq_method_mismatch", "no CSeq header")
	default:
		eval("cseq_method_mismatch")
		if !bytes.Equal(m.CSeqMethod, m.Method) {
			hit("cseq_method_mismatch", string(m.Get(sip.HCSeq)), "the CSeq method differs from the request method %s", method)
		}
	}

	// Content-Length: RFC 3261 §18.3, §20.14.
	eval("content_length_mismatch")
	stream := transport == sip.TransportTCP || transport == "tls"
	switch cl := m.Get(sip.HContentLength); {
	case cl == nil && stream:
		hit("content_length_mismatch", "", "no Content-Length on %s, a stream transport", transport)
	case cl == nil:
	case m.BodyShort:
		hit("content_length_mismatch", string(cl), "Content-Length promises more than the %d body bytes the message holds", len(m.Body))
	case len(bytes.TrimLeft(raw[m.Size:], "\r\n \t")) > 0 && !stream:
		hit("content_length_mismatch", string(cl), "%d bytes follow the body Content-Length counts; a receiver drops them", len(raw)-m.Size)
	}

	// Tags: RFC 3261 §8.1.1.3 (From), §8.2.6.2 and §12.2.1.1 (To).
	if from := m.Get(sip.HFrom); from != nil {
		eval("from_tag_missing")
		if len(sip.Param(from, "tag")) == 0 {
			hit("from_tag_missing", string(from), "the From header has no tag")
		}
	} else {
		skip("from_tag_missing", "no From header")
	}
	to := m.Get(sip.HTo)
	switch {
	case to == nil:
		skip("to_tag_missing", "no To header")
	case !m.Request && m.StatusCode > 100, m.Request && method == "BYE":
		eval("to_tag_missing")
		if len(sip.Param(to, "tag")) == 0 {
			what := "a BYE"
			if !m.Request {
				what = fmt.Sprintf("a %d response", m.StatusCode)
			}
			hit("to_tag_missing", string(to), "%s without a To tag", what)
		}
	default:
		skip("to_tag_missing", "applies to responses other than 100 and to BYE; other requests may open a dialog")
	}

	// Via branch: RFC 3261 §8.1.1.7, every Via of the message.
	if m.Has(sip.HVia) {
		eval("via_branch_cookie")
		for _, h := range m.Headers {
			if h.ID != sip.HVia {
				continue
			}
			for _, via := range splitComma(h.Value) {
				b := sip.Param(via, "branch")
				switch {
				case len(b) == 0:
					hit("via_branch_cookie", string(via), "a Via without a branch")
				case !bytes.HasPrefix(b, []byte(viaCookie)):
					hit("via_branch_cookie", string(via), "a Via branch without the z9hG4bK cookie")
				}
			}
		}
	} else {
		skip("via_branch_cookie", "no Via header")
	}

	sdpIDs := []string{"sdp_line_syntax", "sdp_required_line_missing", "sdp_line_order", "sdp_connection_missing"}
	switch {
	case len(m.Body) == 0 || !bytes.Contains(bytes.ToLower(m.Get(sip.HContentType)), []byte("application/sdp")):
		for _, id := range sdpIDs {
			skip(id, "the message has no application/sdp body")
		}
	case m.BodyShort:
		for _, id := range sdpIDs {
			skip(id, "the SDP body is cut short of its Content-Length")
		}
	default:
		v.Evaluated = append(v.Evaluated, sdpIDs...)
		checkSDP(m.Body, hit)
	}
	return v, nil
}

// sessionOrder and mediaOrder are RFC 4566 §5's line types in their
// order; a type's position may not go backwards.
const (
	sessionOrder = "vosiuepcbtrzka"
	mediaOrder   = "micbka"
)

// checkSDP checks an SDP body's line grammar (RFC 4566 §5): the lines
// and their order, the mandatory session lines, a connection for every
// media section. It reports at most one finding per rule and line.
func checkSDP(body []byte, hit func(id, ev, format string, a ...any)) {
	lines := strings.Split(strings.TrimRight(string(body), "\r\n"), "\n")
	seen := map[byte]int{} // session-level line types
	sessionC, inMedia := false, false
	pos := 0 // position in the current order
	mediaC, mediaLine, mediaN := false, "", 0
	endMedia := func() {
		if inMedia && !mediaC && !sessionC {
			hit("sdp_connection_missing", mediaLine, "media section %d has no c= and the session has none", mediaN)
		}
	}
	for i, ln := range lines {
		ln = strings.TrimSuffix(ln, "\r")
		n := i + 1
		if len(ln) < 2 || ln[1] != '=' || ln[0] < 'a' || ln[0] > 'z' || strings.HasPrefix(ln[2:], " ") {
			hit("sdp_line_syntax", ln, "line %d is not <type>=<value>", n)
			continue
		}
		typ := ln[0]
		if i == 0 && ln != "v=0" {
			hit("sdp_required_line_missing", ln, "line 1 is not v=0")
		}
		if typ == 'm' {
			endMedia()
			if seen['t'] == 0 && !inMedia {
				hit("sdp_required_line_missing", ln, "no t= before the first m=")
			}
			inMedia, mediaC, mediaLine, pos = true, false, ln, 0
			mediaN++
			continue
		}
		order := sessionOrder
		if inMedia {
			order = mediaOrder
		}
		p := strings.IndexByte(order, typ)
		switch {
		case p < 0 && inMedia:
			hit("sdp_line_order", ln, "line %d: %c= is not allowed in a media section", n, typ)
			continue
		case p < 0:
			hit("sdp_line_syntax", ln, "line %d: %c= is not an SDP line type", n, typ)
			continue
		case p < pos && !(typ == 't' && order[pos] == 'r'): // t= r= repeat as a group
			hit("sdp_line_order", ln, "line %d: %c= after a line that follows it in RFC 4566's order", n, typ)
		}
		pos = max(pos, p)
		if inMedia {
			mediaC = mediaC || typ == 'c'
			continue
		}
		seen[typ]++
		switch typ {
		case 'o':
			if len(strings.Fields(ln[2:])) != 6 {
				hit("sdp_required_line_missing", ln, "o= has %d fields, not 6", len(strings.Fields(ln[2:])))
			}
		case 'c':
			sessionC = true
		}
	}
	endMedia()
	if len(lines) > 1 && (seen['o'] == 0 || seen['s'] == 0) {
		hit("sdp_required_line_missing", "", "the session has no o= or no s= line")
	}
	if seen['t'] == 0 && !inMedia {
		hit("sdp_required_line_missing", "", "the session has no t= line")
	}
}

// splitComma splits a header value at commas outside quotes and <…>.
func splitComma(v []byte) [][]byte {
	var out [][]byte
	depth, quoted, start := 0, false, 0
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c == '"':
			quoted = !quoted
		case quoted:
		case c == '<':
			depth++
		case c == '>':
			depth--
		case c == ',' && depth <= 0:
			out = append(out, bytes.TrimSpace(v[start:i]))
			start = i + 1
		}
	}
	return append(out, bytes.TrimSpace(v[start:]))
}
