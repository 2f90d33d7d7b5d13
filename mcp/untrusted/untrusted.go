package untrusted

import (
	"strings"
	"unicode/utf8"
)

// Markers around sender text. The two bracket code points mean nothing in
// SIP, J1939 or J1587, so rewriting them inside the payload costs nothing
// and makes the fence unforgeable.
const (
	Open  = "⟦untrusted-capture-data⟧"
	Close = "⟦/untrusted-capture-data⟧"
	// MaxFieldBytes caps one Text (a display name, a User-Agent, a VIN):
	// no RFC bounds them, and 256 clears every honest value (the longest
	// browser User-Agents reach about 150) while leaving a sender about
	// three lines of prose to write instructions in.
	MaxFieldBytes = 256
	// MaxBodyBytes caps one Body (an SDP, a message); the response byte
	// budget bounds an answer as a whole.
	MaxBodyBytes = 64 << 10
	// TruncatedMark says a cap fired, so a cut value never reads as whole.
	TruncatedMark = "…[truncated]"
)

// Text is single-line sender text. Line breaks and tabs are removed when
// it is fenced.
type Text string

// Body is multi-line sender text (an SDP body, a message); it keeps its
// newlines and tabs when fenced, because an agent reads SDP a= lines.
type Body string

// MarshalText fences t. An empty value stays empty: there is nothing to
// distrust, and omitempty still decides whether a key exists.
func (t Text) MarshalText() ([]byte, error) { return []byte(Fence(string(t), false)), nil }

// MarshalText fences b, keeping its line structure.
func (b Body) MarshalText() ([]byte, error) { return []byte(Fence(string(b), true)), nil }

// Texts converts plain strings (a header's values, a list of User-Agents)
// into Texts; nil stays nil.
func Texts(ss []string) []Text {
	if ss == nil {
		return nil
	}
	out := make([]Text, len(ss))
	for i, s := range ss {
		out[i] = Text(s)
	}
	return out
}

// Fence cleans s and wraps it in the markers; body keeps newlines and
// tabs and takes the larger cap.
func Fence(s string, body bool) string {
	if s == "" {
		return ""
	}
	limit := MaxFieldBytes
	if body {
		limit = MaxBodyBytes
	}
	clean, cut := Sanitize(s, body, limit)
	if cut {
		clean += TruncatedMark
	}
	return Open + clean + Close
}

// Sanitize rewrites the fence brackets to ASCII, drops C0/C1 controls (an
// ESC is an ANSI sequence in whatever renders the transcript, a NUL
// truncates naive consumers) and the Unicode bidi controls (which a
// control-only strip misses: "Trojan Source"), replaces invalid UTF-8,
// and cuts at limit bytes on a rune boundary, reporting whether it cut.
// keepLines keeps \n and \t.
func Sanitize(s string, keepLines bool, limit int) (string, bool) {
	var b strings.Builder
	b.Grow(min(len(s), limit))
	for _, r := range s {
		switch {
		case r == '⟦':
			r = '['
		case r == '⟧':
			r = ']'
		case keepLines && (r == '\n' || r == '\t'):
		case IsControl(r) || IsBidiControl(r):
			continue
		}
		if b.Len()+utf8.RuneLen(r) > limit {
			return b.String(), true
		}
		b.WriteRune(r) // an invalid byte arrives here as U+FFFD
	}
	return b.String(), false
}

// IsControl reports a C0 or C1 control character, DEL included.
func IsControl(r rune) bool {
	return r < 0x20 || (r >= 0x7F && r <= 0x9F)
}

// IsBidiControl lists the explicit directional formatting characters of
// Unicode UAX #9: embeddings and overrides, isolates, and the marks.
func IsBidiControl(r rune) bool {
	switch {
	case r >= 0x202A && r <= 0x202E: // LRE RLE PDF LRO RLO
		return true
	case r >= 0x2066 && r <= 0x2069: // LRI RLI FSI PDI
		return true
	}
	return r == 0x200E || r == 0x200F || r == 0x061C // LRM RLM ALM
}

// PrintableASCII renders payload bytes that should be text (a VIN, a
// component id) as printable ASCII, every other byte as '.', for a fenced
// view beside the hex, which stays the truth.
func PrintableASCII(b []byte) Text {
	out := make([]byte, len(b))
	for i, c := range b {
		if c >= 0x20 && c < 0x7F {
			out[i] = c
		} else {
			out[i] = '.'
		}
	}
	return Text(out)
}
