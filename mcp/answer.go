package mcp

import (
	"encoding/json"
	"slices"
	"strconv"
	"unicode/utf8"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
)

// appendAnswer encodes a tools/call answer as one JSON-RPC line, or
// reports false for any other message (the caller falls back to
// encoding/json). A tool's answer is one text block holding a JSON
// envelope of up to MaxResponseBytes: encoding/json escapes it and then
// re-scans the escaped copy (it compacts every MarshalJSON output, and
// CallToolResult has one), which cost more CPU than the tool itself
// (docs/benchmarks.md). Here it is escaped once into dst.
//
// The keys are mcp-go's: _meta when set, content, isError when set,
// resultType when set, structuredContent when the tool sent its raw copy
// (the server's own compact JSON, written as it is).
func appendAnswer(dst []byte, msg mcpgo.JSONRPCMessage) ([]byte, bool) {
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

// jsonSafe marks the ASCII bytes a JSON string holds as they are.
var jsonSafe = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// appendJSONString appends s as a JSON string, as encoding/json does
// without HTML escaping: quote, backslash and control characters
// escaped, invalid UTF-8 replaced by U+FFFD, and U+2028/U+2029 escaped
// (a JSON line read as JavaScript stays one line).
func appendJSONString(dst []byte, s string) []byte {
	// Room for the quotes and an escape per eight bytes: one growth for
	// a JSON document's text, not one per doubling.
	dst = slices.Grow(dst, len(s)+len(s)/8+2)
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if jsonSafe[c] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
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
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

const hexDigit = "0123456789abcdef"
