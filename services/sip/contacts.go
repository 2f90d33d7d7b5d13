package sip

import (
	"bytes"
	"strconv"
)

// A REGISTER's expiry bounds: RFC 3261 §20.19 allows up to 2^32-1
// seconds; anything past maxExpires (a year) is read as maxExpires, so
// an expiry time never overflows.
const maxExpires = 365 * 24 * 3600

// splitContacts splits a Contact header value into its contacts at the
// commas outside quotes and <…> (RFC 3261 §20.10, a name-addr may quote
// a display name holding commas). "*" is one contact. Empty elements are
// left out. The parts are sub-slices of v.
func splitContacts(v []byte, each func(c []byte) bool) {
	depth, start := 0, 0
	for i := 0; i < len(v); i++ {
		switch v[i] {
		case '"':
			// A quoted string ends at the next unescaped quote.
			for i++; i < len(v) && v[i] != '"'; i++ {
				if v[i] == '\\' {
					i++
				}
			}
		case '<':
			depth++
		case '>':
			if depth > 0 {
				depth--
			}
		case ',':
			if depth > 0 {
				continue
			}
			if c := trimWS(v[start:i]); len(c) > 0 && !each(c) {
				return
			}
			start = i + 1
		}
	}
	if start < len(v) {
		if c := trimWS(v[start:]); len(c) > 0 {
			each(c)
		}
	}
}

// expiresValue reads a delta-seconds value (an Expires header, or a
// Contact's expires parameter): ok is false when b is not decimal
// digits; values past a year are read as a year.
func expiresValue(b []byte) (secs int, ok bool) {
	b = trimWS(b)
	if len(b) == 0 {
		return 0, false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	if len(b) > 9 {
		return maxExpires, true
	}
	n, _ := strconv.Atoi(string(b))
	return min(n, maxExpires), true
}

// expiresHeader returns the value of m's Expires header, if any and
// well formed. Expires has no compact form and is read only for
// REGISTER, so it is looked up by name rather than kept by the parser.
func expiresHeader(m *Parsed) (int, bool) {
	for _, h := range m.Headers {
		if len(h.Name) == len("Expires") && bytes.EqualFold(h.Name, []byte("Expires")) {
			return expiresValue(h.Value)
		}
	}
	return 0, false
}
