package sip

import "bytes"

// HeaderID names the headers the analyser reads; 0 is any other header.
type HeaderID int8

// Known headers.
const (
	HOther HeaderID = iota
	HCallID
	HFrom
	HTo
	HVia
	HCSeq
	HContentLength
	HContentType
	HContact
	HUserAgent
	HServer
	HReason
	HSubject
	HEvent
	HSupported
	HReferTo
	HAuthenticate // WWW-Authenticate
	HProxyAuthenticate
	HAuthorization
	HMaxForwards
	numKnown
)

// compactForms maps RFC 3261 §7.3.3 (and later RFCs') one-letter names.
var compactForms = [256]HeaderID{
	'i': HCallID, 'I': HCallID,
	'f': HFrom, 'F': HFrom,
	't': HTo, 'T': HTo,
	'v': HVia, 'V': HVia,
	'l': HContentLength, 'L': HContentLength,
	'c': HContentType, 'C': HContentType,
	'm': HContact, 'M': HContact,
	's': HSubject, 'S': HSubject,
	'o': HEvent, 'O': HEvent,
	'k': HSupported, 'K': HSupported,
	'r': HReferTo, 'R': HReferTo,
}

var longForms = []struct {
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

// longByInitial is longForms by the lower-case first letter of the name:
// headerID runs for every header line of every message, and most lines
// are compared with one or two names instead of every one.
var longByInitial = func() (t [256][]int) {
	for i, f := range longForms {
		c := lower(f.name[0])
		t[c] = append(t[c], i)
	}
	return t
}()

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// headerID names a header line's name; name is a token (ASCII), so an
// ASCII case fold is RFC 3261's case-insensitive match.
func headerID(name []byte) HeaderID {
	if len(name) == 1 {
		return compactForms[name[0]]
	}
	if len(name) == 0 {
		return HOther
	}
	for _, i := range longByInitial[lower(name[0])] {
		if f := longForms[i]; equalFoldASCII(name, f.name) {
			return f.id
		}
	}
	return HOther
}

// Param returns the value of parameter name (e.g. "tag", "branch") in a
// header value, or nil. Parameters inside <…> belong to the URI and are
// skipped.
func Param(v []byte, name string) []byte {
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

// URIOf returns the URI of a name-addr or addr-spec header value.
func URIOf(v []byte) []byte {
	if i := bytes.IndexByte(v, '<'); i >= 0 {
		if j := bytes.IndexByte(v[i:], '>'); j > 0 {
			return v[i+1 : i+j]
		}
		return v[i+1:]
	}
	if i := bytes.IndexByte(v, ';'); i >= 0 {
		return trimWS(v[:i])
	}
	return trimWS(v)
}

// UserOf returns the user part of a sip:, sips: or tel: URI, or nil.
func UserOf(uri []byte) []byte {
	c := bytes.IndexByte(uri, ':')
	if c < 0 {
		return nil
	}
	rest := uri[c+1:]
	if at := bytes.IndexByte(rest, '@'); at >= 0 {
		rest = rest[:at]
		if k := bytes.IndexByte(rest, ':'); k >= 0 { // user:password
			rest = rest[:k]
		}
		return rest
	}
	if bytes.EqualFold(uri[:c], []byte("tel")) {
		if k := bytes.IndexByte(rest, ';'); k >= 0 {
			rest = rest[:k]
		}
		return rest
	}
	return nil
}

// DisplayName returns the display name of a name-addr, unquoted, or nil.
func DisplayName(v []byte) []byte {
	i := bytes.IndexByte(v, '<')
	if i <= 0 {
		return nil
	}
	d := trimWS(v[:i])
	if len(d) >= 2 && d[0] == '"' && d[len(d)-1] == '"' {
		d = d[1 : len(d)-1]
	}
	return d
}
