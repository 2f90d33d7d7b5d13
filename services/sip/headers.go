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

// headerID names a header line's name. It runs for every header line of
// every message, so it picks the one name that can match by the name's
// length and first letter and compares only that: as written in RFC 3261
// first (a compare the compiler unrolls), then case-insensitively, as
// names match.
func headerID(name []byte) HeaderID {
	switch c := name0(name) | 0x20; len(name) {
	case 0:
		return HOther
	case 1:
		return compactForms[name[0]]
	case 2:
		return nameIs(name, "To", HTo)
	case 3:
		return nameIs(name, "Via", HVia)
	case 4:
		if c == 'f' {
			return nameIs(name, "From", HFrom)
		}
		return nameIs(name, "CSeq", HCSeq)
	case 5:
		return nameIs(name, "Event", HEvent)
	case 6:
		if c == 's' {
			return nameIs(name, "Server", HServer)
		}
		return nameIs(name, "Reason", HReason)
	case 7:
		switch {
		case c == 's':
			return nameIs(name, "Subject", HSubject)
		case name[1]|0x20 == 'a':
			return nameIs(name, "Call-ID", HCallID)
		}
		return nameIs(name, "Contact", HContact)
	case 8:
		return nameIs(name, "Refer-To", HReferTo)
	case 9:
		return nameIs(name, "Supported", HSupported)
	case 10:
		return nameIs(name, "User-Agent", HUserAgent)
	case 12:
		if c == 'c' {
			return nameIs(name, "Content-Type", HContentType)
		}
		return nameIs(name, "Max-Forwards", HMaxForwards)
	case 13:
		return nameIs(name, "Authorization", HAuthorization)
	case 14:
		return nameIs(name, "Content-Length", HContentLength)
	case 16:
		return nameIs(name, "WWW-Authenticate", HAuthenticate)
	case 18:
		return nameIs(name, "Proxy-Authenticate", HProxyAuthenticate)
	}
	return HOther
}

// name0 is name's first byte, or 0.
func name0(name []byte) byte {
	if len(name) == 0 {
		return 0
	}
	return name[0]
}

// nameIs returns id when name is want under an ASCII case fold, else
// HOther.
func nameIs(name []byte, want string, id HeaderID) HeaderID {
	if string(name) == want || equalFoldASCII(name, want) {
		return id
	}
	return HOther
}

// Param returns the value of parameter name (e.g. "tag", "branch") in a
// header value, or nil. Parameters inside <…> belong to the URI and are
// skipped.
func Param(v []byte, name string) []byte {
	// Trailing whitespace holds no parameter and would only be trimmed off
	// every candidate below: drop it once.
	for len(v) > 0 && isWS(v[len(v)-1]) {
		v = v[:len(v)-1]
	}
	depth := 0
	for i := 0; i < len(v); i++ {
		c := v[i]
		// It runs for the Via and To of every message: one look-up steps
		// over the bytes none of the cases below wants.
		if !paramByte[c] {
			continue
		}
		switch c {
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
			p := v[i+1:]
			for len(p) > 0 && isWS(p[0]) {
				p = p[1:]
			}
			// An ASCII fold: name is ASCII, and a byte above 0x7F in p
			// matches none of its letters under bytes.EqualFold either.
			if len(p) > len(name) && equalFoldASCII(p[:len(name)], name) {
				r := trimWS(p[len(name):])
				if len(r) > 0 && r[0] == '=' {
					r = trimWS(r[1:])
					// bytes.IndexAny, by hand: with a cutset it costs
					// more than the rest of Param (docs/benchmarks.md).
					for end, c := range r {
						if paramEnd[c] {
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

// paramByte marks the bytes Param acts on; paramEnd those that end a
// parameter's value.
var (
	paramByte = [256]bool{'<': true, '>': true, '"': true, ';': true}
	paramEnd  = [256]bool{';': true, ',': true, ' ': true, '\t': true, '>': true}
)

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

// commonName reads the header names nearly every message carries, as RFC
// 3261 writes them and followed by their colon, with one comparison
// each: it returns the name's length and its HeaderID, or 0 for any other
// line, which Parse then reads byte by byte. The name scan and headerID
// were about a quarter of the parse (docs/benchmarks.md).
func commonName(b []byte) (int, HeaderID) {
	if len(b) < len("Content-Length:") {
		return 0, HOther // the headers' end is near: the general path
	}
	switch b[0] {
	case 'V':
		if string(b[:4]) == "Via:" {
			return 3, HVia
		}
	case 'F':
		if string(b[:5]) == "From:" {
			return 4, HFrom
		}
	case 'T':
		if string(b[:3]) == "To:" {
			return 2, HTo
		}
	case 'C':
		switch {
		case string(b[:8]) == "Call-ID:":
			return 7, HCallID
		case string(b[:5]) == "CSeq:":
			return 4, HCSeq
		case string(b[:8]) == "Contact:":
			return 7, HContact
		case string(b[:13]) == "Content-Type:":
			return 12, HContentType
		case string(b[:15]) == "Content-Length:":
			return 14, HContentLength
		}
	case 'M':
		if string(b[:13]) == "Max-Forwards:" {
			return 12, HMaxForwards
		}
	case 'U':
		if string(b[:11]) == "User-Agent:" {
			return 10, HUserAgent
		}
	case 'S':
		if string(b[:7]) == "Server:" {
			return 6, HServer
		}
	}
	return 0, HOther
}
