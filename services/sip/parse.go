package sip

import (
	"bytes"
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
func (m *Parsed) Parse(b []byte) error {
	hs := m.Headers[:0]
	*m = Parsed{Headers: hs}
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
	for {
		if off >= len(b) {
			return perr(ReasonNoHeaderEnd, off)
		}
		start := off
		line, next, ok := nextLine(b, off)
		if !ok {
			return perr(ReasonNoHeaderEnd, off)
		}
		if len(line) == 0 {
			off = next
			break
		}
		// Folding (RFC 3261 §7.3.1): continuation lines start with SP/HT.
		end := start + len(line)
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
		if len(m.Headers) >= MaxHeaders {
			return perr(ReasonTooMany, start)
		}
		full := b[start:end]
		colon := bytes.IndexByte(full, ':')
		if colon <= 0 {
			return perr(ReasonHeaderSyntax, start)
		}
		name := trimWS(full[:colon])
		if len(name) == 0 || !isToken(name) {
			return perr(ReasonHeaderSyntax, start)
		}
		h := Header{Name: name, Value: trimWS(full[colon+1:]), ID: headerID(name)}
		m.Headers = append(m.Headers, h)
		if h.ID != 0 && m.known[h.ID] == 0 {
			m.known[h.ID] = int16(len(m.Headers))
			if h.ID == HContentLength {
				n, ok := atoi(h.Value)
				if !ok {
					return perr(ReasonContentLength, start)
				}
				contentLength = n
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
	if v := m.Get(HCSeq); v != nil {
		m.parseCSeq(v)
	}
	return nil
}

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
	n, err := strconv.ParseUint(string(v[:i]), 10, 32) // no allocation: the conversion does not escape
	if err != nil {
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
	if len(line) > len(sipVersion) && bytes.EqualFold(line[:len(sipVersion)], sipVersion) && line[len(sipVersion)] == ' ' {
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
	if sp2 <= 0 || !bytes.EqualFold(rest[sp2+1:], sipVersion) {
		return perr(ReasonStartLine, off)
	}
	m.Request, m.Method, m.RequestURI = true, line[:sp], rest[:sp2]
	return nil
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
