package answerjson

import (
	"bytes"
	"context"
	"crypto/rand"
	"net/http"
	"slices"
	"strconv"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Over HTTP, mcp-go's streamable-HTTP server encodes a tools/call answer
// inside its own handler with encoding/json, which escapes the text
// block and then re-scans the escaped copy: 48 % of the daemon's CPU on
// a 100-row list_dialogs page (docs/benchmarks.md). The front door's gate
// gives each HTTP tools/call a splice: the outermost tool middleware puts a
// placeholder, random per call, where the text goes, so mcp-go encodes a
// few bytes, and the response writer puts the text, escaped once by
// appendJSONString, where mcp-go wrote the placeholder (in a JSON body
// or in the call's final SSE event alike). mcp-go keeps every protocol
// decision: era, session, SSE upgrade, status code, the envelope's keys.

// splice is one HTTP tools/call's text blocks, held back from mcp-go.
type splice struct {
	marker string // random per call, never sent: block i is marker+"-"+i
	quoted []byte // `"` + marker + "-", as encoding/json writes a placeholder
	texts  []string
}

type spliceKey struct{}

// Splice gives an HTTP tools/call its splice and the writer that fills
// it in: the front door's gate calls it for every tools/call it admits.
func Splice(ctx context.Context, w http.ResponseWriter) (context.Context, http.ResponseWriter) {
	m := "fieldtap-answer-" + rand.Text()
	sp := &splice{marker: m, quoted: []byte(`"` + m + "-")}
	return context.WithValue(ctx, spliceKey{}, sp), &spliceWriter{ResponseWriter: w, sp: sp}
}

// Spliced is the server's outermost tool middleware: on an HTTP call it
// keeps the answer's text blocks for the writer and hands mcp-go
// placeholders. Everything inside (audit, counts, scope, recovery) sees
// the real text. On a call without a splice (stdio) it does nothing.
func Spliced(next server.ToolHandlerFunc) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		res, err := next(ctx, req)
		sp, ok := ctx.Value(spliceKey{}).(*splice)
		if !ok || err != nil || res == nil || sp.texts != nil {
			return res, err
		}
		held := *res
		held.Content = slices.Clone(res.Content)
		var texts []string
		for i, c := range res.Content {
			if t, ok := c.(mcpgo.TextContent); ok && t.Annotations == nil && t.Meta == nil {
				texts = append(texts, t.Text)
				t.Text = sp.marker + "-" + strconv.Itoa(len(texts)-1)
				held.Content[i] = t
			}
		}
		if texts == nil {
			return res, err
		}
		sp.texts = texts
		return &held, nil
	}
}

// spliceWriter writes the held texts where mcp-go wrote their
// placeholders. mcp-go writes a JSON body, and each SSE event, in one
// Write. The placeholders are only ever in the call's answer, which the
// goroutine that ran the middleware writes, so the texts are read only
// there (the notification forwarder writes through here too).
type spliceWriter struct {
	http.ResponseWriter
	sp *splice
}

func (w *spliceWriter) Write(p []byte) (int, error) {
	if !bytes.Contains(p, w.sp.quoted) {
		return w.ResponseWriter.Write(p)
	}
	buf := Buffer()
	b := (*buf)[:0]
	rest := p
	for {
		i := bytes.Index(rest, w.sp.quoted)
		if i < 0 {
			break
		}
		after := rest[i+len(w.sp.quoted):]
		end := bytes.IndexByte(after, '"')
		k, err := strconv.Atoi(string(after[:max(end, 0)]))
		if end < 0 || err != nil || k < 0 || k >= len(w.sp.texts) {
			break
		}
		b = append(b, rest[:i]...)
		b = appendJSONString(b, w.sp.texts[k])
		rest = after[end+1:]
	}
	b = append(b, rest...)
	_, err := w.ResponseWriter.Write(b)
	*buf = b
	Recycle(buf)
	if err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush passes on to the gate's writer (mcp-go streams SSE through it).
func (w *spliceWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (w *spliceWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
