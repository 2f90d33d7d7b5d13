package sip

import (
	"bytes"
	"math"
	"strconv"
)

// Parser bounds. RFC 3261 sets none; these clear every honest message by a
// wide margin and stop a sender from making us hold or scan without end.
const (
	// MaxHeaderLine is the longest logical header line (after unfolding).
	MaxHeaderLine = 8 << 10
	// MaxHeaders is the most header fields one message may carry.
	MaxHeaders = 200
	// MaxMessage is the largest message (headers + body) we accept; a UDP
	// datagram cannot exceed it and a TCP stream is framed against it.
	MaxMessage = 64 << 10
)

// Reasons a message is not parsed, as counted by the store.
const (
	ReasonEmpty         = "empty"
	ReasonStartLine     = "bad_start_line"
	ReasonStatusCode    = "bad_status_code"
	ReasonLineTooLong   = "header_line_too_long"
	ReasonTooMany       = "too_many_headers"
	ReasonHeaderSyntax  = "bad_header_line"
	ReasonNoHeaderEnd   = "no_end_of_headers"
	ReasonTooLarge      = "message_too_large"
	ReasonContentLength = "bad_content_length"
	ReasonNoCallID      = "missing_call_id"
	ReasonCSeq          = "bad_cseq"
	ReasonPanic         = "parser_panic" // must stay zero; counted rather than crashing the port
)

// ParseError says why a message was refused and where.
type ParseError struct {
	Reason string // one of the Reason constants
	Offset int    // byte offset in the message
}

func (e *ParseError) Error() string {
	return "sip: " + e.Reason + " at byte " + strconv.Itoa(e.Offset)
}

// Header is one header field. Name is as written (possibly compact);
// Value is trimmed and may still contain a fold (CRLF + whitespace):
// use Unfold to read it as one line.
type Header struct {
	Name  []byte
	Value []byte
	ID    HeaderID
}

// Parsed is a parsed SIP message. Its slices point into the bytes given
// to Parse; it is reused by calling Parse again, which resets every field.
type Parsed struct {
	Request    bool
	Method     []byte // requests
	RequestURI []byte
	StatusCode int    // responses
	Reason     []byte // responses: the reason phrase
	Headers    []Header
	Body       []byte
	// BodyShort is set when Content-Length promised more bytes than the
	// message holds (a truncated datagram); Body holds what there is.
	BodyShort bool
	// Size is the message's length in bytes, headers and body.
	Size int

	CSeqNum    uint32
	CSeqMethod []byte
	known      [numKnown]int16 // index+1 into Headers of the first of each known header
	// The parameters the dialog store reads of every message, found in
	// the one pass over the headers (ViaBranch, ToTag).
	viaBranch, toTag []byte
	// foldedVersion says the request line's SIP/2.0 matched only under
	// Unicode's case fold (parseDatagram).
	foldedVersion bool
}

// Get returns the value of the first header with id, or nil.
func (m *Parsed) Get(id HeaderID) []byte {
	if id <= 0 || id >= numKnown || m.known[id] == 0 {
		return nil
	}
	return m.Headers[m.known[id]-1].Value
}

// Has reports whether a header with id is present.
func (m *Parsed) Has(id HeaderID) bool {
	return id > 0 && id < numKnown && m.known[id] != 0
}

func perr(reason string, off int) error { return &ParseError{Reason: reason, Offset: off} }

// Parse parses one message from b. For a datagram, b is the whole
// payload; a body with no Content-Length runs to the end of b. Parse never
// panics and allocates only when Headers must grow.
//
// It runs on every SIP message, so it reads each header line once: the
// name byte by byte up to its colon, the rest with one search for the
// line's end; the Via branch and the To tag are read from their first
// headers here, so the store does not search those values again.
func (m *Parsed) Parse(b []byte) error {
	*m = Parsed{Headers: m.Headers[:0]}
	if len(b) > MaxMessage {
		return perr(ReasonTooLarge, MaxMessage)
	}
	// RFC 3261 §7.5: ignore CRLFs before the start line.
	off := 0
	for off < len(b) && (b[off] == '\r' || b[off] == '\n') {
		off++
	}
	if off == len(b) {
		return perr(ReasonEmpty, 0)
	}
	line, next, ok := nextLine(b, off)
	if !ok || len(line) > MaxHeaderLine {
		return perr(ReasonStartLine, off)
	}
	if err := m.startLine(line, off); err != nil {
		return err
	}
	off = next
	contentLength := -1
	// The headers grow in a local: m.Headers, behind a pointer, would be
	// loaded and stored again for every line.
	hs := m.Headers
	defer func() { m.Headers = hs }()
	for {
		if off >= len(b) {
			return perr(ReasonNoHeaderEnd, off)
		}
		start := off
		// The blank line ending the headers.
		if b[off] == '\n' {
			off++
			break
		}
		if b[off] == '\r' && off+1 < len(b) && b[off+1] == '\n' {
			off += 2
			break
		}
		// The name: whitespace, a token, whitespace, the colon. Whitespace
		// may run over a fold, so the colon is checked against the line's
		// end once that is known.
		crossed := false // whether the whitespace ran over a line's end
		nameStart, nameEnd, colon := off, 0, -1
		n, id := commonName(b[off:])
		if n > 0 {
			nameEnd, colon = off+n, off+n
		} else {
			i := off
			for i < len(b) && isWS(b[i]) {
				crossed = crossed || b[i] == '\n'
				i++
			}
			nameStart = i
			for i < len(b) && tokenChar[b[i]] {
				i++
			}
			nameEnd = i
			for i < len(b) && isWS(b[i]) {
				crossed = crossed || b[i] == '\n'
				i++
			}
			if i < len(b) && b[i] == ':' && nameEnd > nameStart {
				colon = i
			}
		}
		from := start
		if colon >= 0 && !crossed {
			from = colon + 1
		}
		nl := bytes.IndexByte(b[from:], '\n')
		if nl < 0 {
			return perr(ReasonNoHeaderEnd, off)
		}
		end, next := from+nl, from+nl+1
		if end > start && b[end-1] == '\r' {
			end--
		}
		// Folding (RFC 3261 §7.3.1): continuation lines start with SP/HT.
		for next < len(b) && (b[next] == ' ' || b[next] == '\t') {
			l2, n2, ok := nextLine(b, next)
			if !ok {
				return perr(ReasonNoHeaderEnd, next)
			}
			end, next = next+len(l2), n2
			if end-start > MaxHeaderLine {
				return perr(ReasonLineTooLong, start)
			}
		}
		if end-start > MaxHeaderLine {
			return perr(ReasonLineTooLong, start)
		}
		if len(hs) >= MaxHeaders {
			return perr(ReasonTooMany, start)
		}
		if colon < 0 || colon >= end {
			return perr(ReasonHeaderSyntax, start)
		}
		name := b[nameStart:nameEnd]
		// Filled field by field in place: appending a Header value copies
		// it with a bulk write barrier while the GC runs, which cost more
		// than the rest of the line's parse.
		if len(hs) < cap(hs) {
			hs = hs[:len(hs)+1]
		} else {
			hs = append(hs, Header{})
		}
		h := &hs[len(hs)-1]
		if n == 0 {
			id = headerID(name)
		}
		h.Name, h.Value, h.ID = name, trimWS(b[colon+1:end]), id
		if h.ID != 0 && m.known[h.ID] == 0 {
			m.known[h.ID] = int16(len(hs))
			switch h.ID {
			case HContentLength:
				n, ok := atoi(h.Value)
				if !ok {
					return perr(ReasonContentLength, start)
				}
				contentLength = n
			case HVia:
				m.viaBranch = Param(h.Value, "branch")
			case HTo:
				m.toTag = Param(h.Value, "tag")
			}
		}
		off = next
	}
	rest := b[off:]
	switch {
	case contentLength < 0:
		m.Body = rest
	case contentLength > len(rest):
		m.Body, m.BodyShort = rest, true
	default:
		m.Body = rest[:contentLength]
	}
	m.Size = off + len(m.Body)
	if i := m.known[HCSeq]; i != 0 {
		v := hs[i-1].Value
		m.parseCSeq(v)
	}
	return nil
}

// ViaBranch is Param(m.Get(HVia), "branch"): the branch of the first Via.
func (m *Parsed) ViaBranch() []byte { return m.viaBranch }

// ToTag is Param(m.Get(HTo), "tag"): the tag of the first To.
func (m *Parsed) ToTag() []byte { return m.toTag }

// Validate checks what the dialog store needs: a Call-ID and a CSeq.
func (m *Parsed) Validate() error {
	if len(m.Get(HCallID)) == 0 {
		return perr(ReasonNoCallID, 0)
	}
	if len(m.CSeqMethod) == 0 {
		return perr(ReasonCSeq, 0)
	}
	return nil
}

func (m *Parsed) parseCSeq(v []byte) {
	i := 0
	for i < len(v) && v[i] >= '0' && v[i] <= '9' {
		i++
	}
	if i == 0 || i > 10 {
		return
	}
	var n uint64
	for _, c := range v[:i] {
		n = n*10 + uint64(c-'0')
	}
	if n > math.MaxUint32 {
		return
	}
	meth := trimWS(v[i:])
	if len(meth) == 0 || !isToken(meth) {
		return
	}
	m.CSeqNum, m.CSeqMethod = uint32(n), meth
}

var sipVersion = []byte("SIP/2.0")

func (m *Parsed) startLine(line []byte, off int) error {
	if len(line) > len(sipVersion) && equalFoldASCII(line[:len(sipVersion)], sipVersion) && line[len(sipVersion)] == ' ' {
		rest := line[len(sipVersion)+1:]
		if len(rest) < 3 {
			return perr(ReasonStatusCode, off)
		}
		code := 0
		for _, c := range rest[:3] {
			if c < '0' || c > '9' {
				return perr(ReasonStatusCode, off)
			}
			code = code*10 + int(c-'0')
		}
		if code < 100 || code > 699 || (len(rest) > 3 && rest[3] != ' ') {
			return perr(ReasonStatusCode, off)
		}
		m.StatusCode = code
		if len(rest) > 4 {
			m.Reason = rest[4:]
		}
		return nil
	}
	sp := bytes.IndexByte(line, ' ')
	if sp <= 0 || !isToken(line[:sp]) {
		return perr(ReasonStartLine, off)
	}
	rest := line[sp+1:]
	sp2 := bytes.LastIndexByte(rest, ' ')
	v := rest[sp2+1:]
	if sp2 <= 0 || !isSIPVersion(v) {
		return perr(ReasonStartLine, off)
	}
	m.foldedVersion = len(v) != len(sipVersion)
	m.Request, m.Method, m.RequestURI = true, line[:sp], rest[:sp2]
	return nil
}

// isSIPVersion reports whether v is "SIP/2.0" under bytes.EqualFold. Seven
// bytes match only by an ASCII fold (a rune that folds onto an ASCII
// letter, like U+017F onto S, takes two or three bytes); Unicode's fold
// is looked at only for other lengths, which an honest message never has.
func isSIPVersion(v []byte) bool {
	if len(v) == len(sipVersion) {
		return equalFoldASCII(v, sipVersion)
	}
	return bytes.EqualFold(v, sipVersion)
}

// nextLine returns the line at off without its CRLF or LF, and the offset
// after the terminator. ok is false when no terminator follows.
func nextLine(b []byte, off int) (line []byte, next int, ok bool) {
	i := bytes.IndexByte(b[off:], '\n')
	if i < 0 {
		return nil, len(b), false
	}
	line = b[off : off+i]
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return line, off + i + 1, true
}

func trimWS(b []byte) []byte {
	for len(b) > 0 && isWS(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isWS(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

func isWS(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// isToken reports whether b is an RFC 3261 token.
func isToken(b []byte) bool {
	for _, c := range b {
		if !tokenChar[c] {
			return false
		}
	}
	return len(b) > 0
}

var tokenChar = func() (t [256]bool) {
	for c := 'a'; c <= 'z'; c++ {
		t[c] = true
	}
	for c := 'A'; c <= 'Z'; c++ {
		t[c] = true
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for _, c := range "-.!%*_+`'~" {
		t[c] = true
	}
	return
}()

// atoi parses a non-negative decimal of at most 9 digits.
func atoi(b []byte) (int, bool) {
	b = trimWS(b)
	if len(b) == 0 || len(b) > 9 {
		return 0, false
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// Unfold returns v as one line: each fold (CR? LF followed by whitespace)
// becomes one space. It allocates only when v is folded.
func Unfold(v []byte) []byte {
	if bytes.IndexByte(v, '\n') < 0 {
		return v
	}
	out := make([]byte, 0, len(v))
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c == '\r' || c == '\n' {
			for i+1 < len(v) && isWS(v[i+1]) {
				i++
			}
			out = append(out, ' ')
			continue
		}
		out = append(out, c)
	}
	return out
}
