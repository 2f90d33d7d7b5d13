package answerjson

import (
	"encoding/binary"
	"encoding/json"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
)

// Append encodes a tools/call answer as one JSON-RPC message, or
// reports false for any other message (the caller falls back to
// encoding/json). A tool's answer is one text block holding a JSON
// envelope of up to the server's response budget: encoding/json escapes it and then
// re-scans the escaped copy (it compacts every MarshalJSON output, and
// CallToolResult has one), which cost more CPU than the tool itself
// (docs/benchmarks.md). Here it is escaped once into dst.
//
// The keys are mcp-go's: _meta when set, content, isError when set,
// resultType when set, structuredContent when the tool sent its raw copy
// (the server's own compact JSON, written as it is).
func Append(dst []byte, msg mcpgo.JSONRPCMessage) ([]byte, bool) {
	resp, ok := msg.(mcpgo.JSONRPCResponse)
	if !ok {
		return dst, false
	}
	res, ok := resp.Result.(*mcpgo.CallToolResult)
	if !ok || res == nil || res.StructuredContent != nil || len(res.InputRequests) > 0 || res.RequestState != "" {
		return dst, false
	}
	for _, c := range res.Content {
		if t, ok := c.(mcpgo.TextContent); !ok || t.Annotations != nil || t.Meta != nil {
			return dst, false
		}
	}
	id, err := json.Marshal(resp.ID)
	if err != nil {
		return dst, false
	}
	var meta []byte
	if res.Meta != nil {
		// A few keys (protocol 2026-07-28 names the server in each).
		if meta, err = json.Marshal(res.Meta); err != nil {
			return dst, false
		}
	}
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = append(dst, id...)
	dst = append(dst, `,"result":{`...)
	if meta != nil {
		dst = append(dst, `"_meta":`...)
		dst = append(dst, meta...)
		dst = append(dst, ',')
	}
	dst = append(dst, `"content":[`...)
	for i, c := range res.Content {
		t := c.(mcpgo.TextContent)
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"type":`...)
		dst = appendJSONString(dst, t.Type)
		dst = append(dst, `,"text":`...)
		dst = appendJSONString(dst, t.Text)
		dst = append(dst, '}')
	}
	dst = append(dst, ']')
	if res.IsError {
		dst = append(dst, `,"isError":true`...)
	}
	if res.ResultType != "" {
		dst = append(dst, `,"resultType":`...)
		dst = appendJSONString(dst, string(res.ResultType))
	}
	if len(res.RawStructuredContent) > 0 {
		dst = append(dst, `,"structuredContent":`...)
		dst = append(dst, res.RawStructuredContent...)
	}
	return append(dst, "}}"...), true
}

// jsonExtra is how many bytes a JSON string adds for an ASCII byte: 0
// as it is, 1 for a two-byte escape, and jsonSlow for a byte the fast
// path leaves to appendEscapedRunes (other control characters, and
// every byte over 0x7f). jsonFirst and jsonSecond are the bytes the fast
// path writes for it (the second is overwritten when jsonExtra is 0).
var jsonExtra, jsonFirst, jsonSecond = func() (extra, first, second [256]byte) {
	for c := range 256 {
		first[c] = byte(c)
		switch {
		case c == '"' || c == '\\':
			extra[c], first[c], second[c] = 1, '\\', byte(c)
		case c == '\n' || c == '\r' || c == '\t':
			extra[c], first[c], second[c] = 1, '\\', "nrt"[strings.IndexByte("\n\r\t", byte(c))]
		case c < 0x20 || c >= utf8.RuneSelf:
			extra[c] = jsonSlow
		}
	}
	return
}()

const jsonSlow = 2

// appendJSONString appends s as a JSON string, as encoding/json does
// without HTML escaping: quote, backslash and control characters
// escaped, invalid UTF-8 replaced by U+FFFD, and U+2028/U+2029 escaped
// (a JSON line read as JavaScript stays one line).
//
// A tool's answer is JSON, with a quote every few bytes: a byte-by-byte
// loop cost more than the tool's own work. Here eight bytes are tested
// at once, the run before the first that needs an escape is stored in
// one go (into room for twice the string, so a store may run past the
// run), and that byte is written from the tables; a valid rune over
// 0x7f (the fence marks are) is copied as it is. The first control
// character without a short escape, invalid UTF-8 or U+2028/U+2029
// hands the rest to appendEscapedRunes.
func appendJSONString(dst []byte, s string) []byte {
	n := len(dst)
	dst = slices.Grow(dst, 2*len(s)+2)
	out := dst[n : n+2*len(s)+2]
	out[0] = '"'
	j := 1
	i := 0
	for i < len(s) {
		if i+8 <= len(s) {
			w := load64(s[i:])
			binary.LittleEndian.PutUint64(out[j:j+8], w)
			m := needsEscape(w)
			if m == 0 {
				i += 8
				j += 8
				continue
			}
			k := bits.TrailingZeros64(m) / 8
			i += k
			j += k
		}
		c := s[i]
		e := jsonExtra[c]
		if e == jsonSlow {
			size := plainRune(s[i:])
			if size == 0 {
				dst = appendEscapedRunes(dst[:n+j], s[i:])
				return append(dst, '"')
			}
			j += copy(out[j:], s[i:i+size])
			i += size
			continue
		}
		out[j] = jsonFirst[c]
		out[j+1] = jsonSecond[c]
		j += 1 + int(e)
		i++
	}
	out[j] = '"'
	return dst[:n+j+1]
}

// plainRune is the size of the valid rune over 0x7f that s starts with
// and a JSON string holds as it is, or 0 (a control character, invalid
// UTF-8, U+2028 or U+2029).
func plainRune(s string) int {
	if s[0] < utf8.RuneSelf {
		return 0
	}
	r, size := utf8.DecodeRuneInString(s)
	if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
		return 0
	}
	return size
}

// needsEscape has the top bit of each byte of w set, at least for the
// lowest such byte, that is a quote, a backslash, under 0x20 or over
// 0x7f: 0 when all eight go into a JSON string as they are. (x-1)&^x
// sets a byte's top bit when it is zero; a borrow may set bits above a
// byte that matched, never below.
func needsEscape(w uint64) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	q := w ^ ('"' * ones)
	b := w ^ ('\\' * ones)
	return ((q-ones)&^q | (b-ones)&^b | (w-0x20*ones)&^w | w) & highs
}

// load64 reads eight bytes of s little-endian (one load).
func load64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// appendEscapedRunes appends s escaped as the inside of a JSON string,
// rune by rune: control characters, invalid UTF-8 and U+2028/U+2029
// included.
func appendEscapedRunes(dst []byte, s string) []byte {
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if jsonExtra[c] == 0 {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			if jsonExtra[c] == 1 {
				dst = append(dst, jsonFirst[c], jsonSecond[c])
			} else {
				dst = append(dst, `\u00`...)
				dst = append(dst, hexDigit[c>>4], hexDigit[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			if r == utf8.RuneError {
				dst = append(dst, `\ufffd`...)
			} else {
				dst = append(dst, `\u`...)
				dst = strconv.AppendInt(dst, int64(r), 16)
			}
			i += size
			start = i
			continue
		}
		i += size
	}
	return append(dst, s[start:]...)
}

const hexDigit = "0123456789abcdef"
