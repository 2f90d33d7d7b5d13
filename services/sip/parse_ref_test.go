package sip

import (
	"bytes"
	"testing"
)

// refParse is the parser as it was before the one-pass rewrite, kept as
// the reference the differential fuzz target holds Parse against.
//
// It parses one message from b. For a datagram, b is the whole
// payload; a body with no Content-Length runs to the end of b. Parse never
// panics and allocates only when Headers must grow.
func (m *Parsed) refParse(b []byte) error {
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
		h := Header{Name: name, Value: trimWS(full[colon+1:]), ID: refHeaderID(name)}
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

var refLongForms = []struct {
	name []byte
	id   HeaderID
}{
	{[]byte("Call-ID"), HCallID},
	{[]byte("From"), HFrom},
	{[]byte("To"), HTo},
	{[]byte("Via"), HVia},
	{[]byte("CSeq"), HCSeq},
	{[]byte("Content-Length"), HContentLength},
	{[]byte("Content-Type"), HContentType},
	{[]byte("Contact"), HContact},
	{[]byte("User-Agent"), HUserAgent},
	{[]byte("Server"), HServer},
	{[]byte("Reason"), HReason},
	{[]byte("Subject"), HSubject},
	{[]byte("Event"), HEvent},
	{[]byte("Supported"), HSupported},
	{[]byte("Refer-To"), HReferTo},
	{[]byte("WWW-Authenticate"), HAuthenticate},
	{[]byte("Proxy-Authenticate"), HProxyAuthenticate},
	{[]byte("Authorization"), HAuthorization},
	{[]byte("Max-Forwards"), HMaxForwards},
}

// refLongByInitial is refLongForms by the lower-case first letter of the name:
// headerID runs for every header line of every message, and most lines
// are compared with one or two names instead of every one.
var refLongByInitial = func() (t [256][]int) {
	for i, f := range refLongForms {
		c := refLower(f.name[0])
		t[c] = append(t[c], i)
	}
	return t
}()

func refLower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// refHeaderID is headerID before the switch on length: it names a header line's name; name is a token (ASCII), so an
// ASCII case fold is RFC 3261's case-insensitive match.
func refHeaderID(name []byte) HeaderID {
	if len(name) == 1 {
		return compactForms[name[0]]
	}
	if len(name) == 0 {
		return HOther
	}
	for _, i := range refLongByInitial[refLower(name[0])] {
		if f := refLongForms[i]; equalFoldASCII(name, f.name) {
			return f.id
		}
	}
	return HOther
}

// refParam is Param before the rewrite: it returns the value of parameter name (e.g. "tag", "branch") in a
// header value, or nil. Parameters inside <…> belong to the URI and are
// skipped.
func refParam(v []byte, name string) []byte {
	depth := 0
	for i := 0; i < len(v); i++ {
		switch v[i] {
		case '<':
			depth++
		case '>':
			depth--
		case '"':
			if j := bytes.IndexByte(v[i+1:], '"'); j >= 0 {
				i += j + 1
			}
		case ';':
			if depth > 0 {
				continue
			}
			p := trimWS(v[i+1:])
			// An ASCII fold: name is ASCII, and a byte above 0x7F in p
			// matches none of its letters under bytes.EqualFold either.
			if len(p) > len(name) && equalFoldASCII(p[:len(name)], []byte(name)) {
				r := trimWS(p[len(name):])
				if len(r) > 0 && r[0] == '=' {
					r = trimWS(r[1:])
					// bytes.IndexAny, by hand: with a cutset it costs
					// more than the rest of Param (docs/benchmarks.md).
					for end, c := range r {
						if c == ';' || c == ',' || c == ' ' || c == '\t' || c == '>' {
							return r[:end]
						}
					}
					return r
				}
			}
		}
	}
	return nil
}

// FuzzParseMatchesReference holds the one-pass Parse, headerID and Param
// against the parser they replaced (refParse, refHeaderID, refParam):
// the same verdict, reason and offset on any input, the same fields and
// headers when it parses, and the Via branch and tags Parse captures are
// what Param finds in those headers.
func FuzzParseMatchesReference(f *testing.F) {
	f.Add([]byte(invite))
	f.Add([]byte("SIP/2.0 200 OK\r\ni: x\r\nl: 0\r\n\r\n"))
	f.Add([]byte("OPTIONS sip:h SIP/2.0\r\n Foo\r\n :bar\r\nCall-ID: x\r\n\r\n"))
	f.Add([]byte("OPTIONS sip:h SIP/2.0\r\nFoo\r\n:x\r\n\r\n"))
	f.Add([]byte("OPTIONS sip:h SIP/2.0\r\n\rTo : <sip:a;tag=no>;x;TAG = \"q;tag=r\"1 ;tag=2\r\n\r\n"))
	f.Add([]byte("BYE sip:h SIP/2.0\nv: SIP/2.0/UDP h ;Branch= z9 \n\tcontinued\ncontent-LENGTH: 2\n\nabc"))
	seeds := sipPayloads(f)
	for i, p := range seeds {
		if i%31 == 0 || len(seeds) < 64 {
			f.Add(p)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var got, want Parsed
		gerr, werr := got.Parse(b), want.refParse(b)
		if (gerr == nil) != (werr == nil) || gerr != nil && gerr.Error() != werr.Error() {
			t.Fatalf("Parse: %v, reference: %v", gerr, werr)
		}
		if gerr != nil {
			return
		}
		if got.Request != want.Request || !bytes.Equal(got.Method, want.Method) || !bytes.Equal(got.RequestURI, want.RequestURI) ||
			got.StatusCode != want.StatusCode || !bytes.Equal(got.Reason, want.Reason) || !bytes.Equal(got.Body, want.Body) ||
			got.BodyShort != want.BodyShort || got.Size != want.Size || got.CSeqNum != want.CSeqNum ||
			!bytes.Equal(got.CSeqMethod, want.CSeqMethod) || got.known != want.known || len(got.Headers) != len(want.Headers) {
			t.Fatalf("parsed differently:\n%+v\nreference:\n%+v", got, want)
		}
		for i, h := range got.Headers {
			w := want.Headers[i]
			if !bytes.Equal(h.Name, w.Name) || !bytes.Equal(h.Value, w.Value) || h.ID != w.ID {
				t.Fatalf("header %d: %q %q %d, reference %q %q %d", i, h.Name, h.Value, h.ID, w.Name, w.Value, w.ID)
			}
			for _, name := range []string{"tag", "branch", "TAG", "x", ""} {
				if p, r := Param(h.Value, name), refParam(h.Value, name); !sameBytes(p, r) {
					t.Fatalf("Param(%q, %q) = %q, reference %q", h.Value, name, p, r)
				}
			}
		}
		for _, c := range []struct {
			what      string
			got, want []byte
		}{
			{"ViaBranch", got.ViaBranch(), refParam(want.Get(HVia), "branch")},
			{"ToTag", got.ToTag(), refParam(want.Get(HTo), "tag")},
		} {
			if !sameBytes(c.got, c.want) {
				t.Fatalf("%s = %q, reference %q", c.what, c.got, c.want)
			}
		}
		// FrameLen names headers too, on names that need not be tokens.
		for line := range bytes.SplitSeq(b, []byte("\n")) {
			if c := bytes.IndexByte(line, ':'); c > 0 {
				name := trimWS(line[:c])
				if g, w := headerID(name), refHeaderID(name); g != w {
					t.Fatalf("headerID(%q) = %d, reference %d", name, g, w)
				}
			}
		}
	})
}

// sameBytes is bytes.Equal that also tells nil (no such parameter) from
// empty (a parameter with an empty value).
func sameBytes(a, b []byte) bool { return (a == nil) == (b == nil) && bytes.Equal(a, b) }

// FuzzParseDatagramMatchesReference holds the UDP handler's parse-first
// classification against the order it replaced: LooksLikeSIP, then the
// reference parser only for what looks like SIP.
func FuzzParseDatagramMatchesReference(f *testing.F) {
	f.Add([]byte(invite))
	f.Add([]byte("\r\nSIP/2.0 200 OK\r\ni: x\r\nl: 0\r\n\r\n"))
	f.Add([]byte("INVITE sip:x \u017fIP/2.0\r\nCall-ID: y\r\nCSeq: 1 INVITE\r\n\r\n"))
	f.Add([]byte("INVITE sip:x SIP/2.0\r\r\nCall-ID: y\r\n\r\n"))
	f.Add([]byte("HELLO world\r\n\r\n"))
	f.Add([]byte{0x80, 0x00, 0x12, 0x34, '\n'})
	f.Add([]byte("\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x07example\x03com\x00\x00\x01\x00\x01"))
	f.Fuzz(func(t *testing.T, p []byte) {
		var got, want Parsed
		gsip, gerr := got.parseDatagram(p)
		wsip := LooksLikeSIP(p)
		var werr error
		if wsip {
			werr = want.refParse(p)
		}
		if gsip != wsip || (gerr == nil) != (werr == nil) || gerr != nil && gerr.Error() != werr.Error() {
			t.Fatalf("parseDatagram: SIP %v, %v; reference: SIP %v, %v", gsip, gerr, wsip, werr)
		}
	})
}

// BenchmarkParamViaAndTo reads what the store reads of every message, a
// Via branch and a To tag, by Param and by the reference it replaced.
func BenchmarkParamViaAndTo(b *testing.B) {
	via := []byte("SIP/2.0/UDP 192.0.2.17:5060;branch=z9hG4bKe5a59c39db9c4e57")
	to := []byte("<sip:2013@198.51.100.13>;tag=2c4783b7")
	for _, c := range []struct {
		name  string
		param func([]byte, string) []byte
	}{{"Param", Param}, {"reference", refParam}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if len(c.param(via, "branch")) == 0 || len(c.param(to, "tag")) == 0 {
					b.Fatal("parameter not found")
				}
			}
		})
	}
}
