package mcp

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"fieldtap/services/filter"
	"fieldtap/services/sip"
)

const toolSearchMessages = "search_messages"

// search_messages bounds.
const (
	// sipSearchMaxBytes bounds the message bytes one call scans, so a
	// search over a full store (512 MiB) answers in bounded time; the rest
	// is reached by next_cursor.
	sipSearchMaxBytes = 64 << 20
	sipSearchMaxHits  = 5   // matching lines reported per message
	sipSearchHitBytes = 200 // bytes of a matching line shown
)

type searchIn struct {
	Query         string `json:"query" jsonschema:"text to find, or an RE2 regular expression when regex is true; at most 512 bytes"`
	Regex         bool   `json:"regex,omitempty" jsonschema:"treat query as an RE2 regular expression (linear time; ^ and $ match at line ends)"`
	CaseSensitive bool   `json:"case_sensitive,omitempty" jsonschema:"match case exactly; default false"`
	Filter        string `json:"filter,omitempty" jsonschema:"dialog filter the messages' dialogs must match (docs/filter.md)"`
	Limit         int    `json:"limit,omitempty" jsonschema:"messages per page, default 50, at most 1000"`
	Cursor        string `json:"cursor,omitempty" jsonschema:"next_cursor of the previous page"`
	Projection
}

type searchHit struct {
	Part   string `json:"part"`             // start_line, header or body
	Header string `json:"header,omitempty"` // the header's name
	Line   int    `json:"line"`             // 0 is the start line
	Text   string `json:"text" untrusted:"true"`
}

type searchRow struct {
	CallID  string      `json:"call_id"`
	Index   int         `json:"index"` // the message's index in its dialog (get_message)
	Message messageRow  `json:"message"`
	Hits    []searchHit `json:"hits"`
	More    int         `json:"more_hits"` // matching lines past the first few
}

func searchCursor(src SourceInfo, seq uint64) string {
	return base64.RawURLEncoding.EncodeToString(fmt.Appendf(nil, "%s|m|%d", src.CaptureIdentity, seq))
}

func searchParseCursor(src SourceInfo, c string) (uint64, error) {
	if c == "" {
		return 0, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(c)
	parts := strings.Split(string(b), "|")
	if err == nil && len(parts) == 3 && parts[0] == src.CaptureIdentity && parts[1] == "m" {
		if seq, err := strconv.ParseUint(parts[2], 10, 64); err == nil {
			return seq, nil
		}
	}
	return 0, fmt.Errorf("cursor is not one search_messages issued in this capture")
}

func compileQuery(in searchIn) (*regexp.Regexp, error) {
	if in.Query == "" {
		return nil, fmt.Errorf("query is empty")
	}
	if len(in.Query) > filter.MaxPattern {
		return nil, fmt.Errorf("query longer than %d bytes", filter.MaxPattern)
	}
	pat := in.Query
	if !in.Regex {
		pat = regexp.QuoteMeta(pat)
	}
	if !in.CaseSensitive {
		pat = "(?i)" + pat
	}
	return regexp.Compile(pat)
}

// messageHits reports the lines of raw that re matches, naming the part.
func messageHits(re *regexp.Regexp, raw []byte) ([]searchHit, int) {
	var hits []searchHit
	more, line, inBody := 0, 0, false
	header := ""
	for rest := raw; len(rest) > 0; line++ {
		l := rest
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			l, rest = rest[:i], rest[i+1:]
		} else {
			rest = nil
		}
		l = bytes.TrimRight(l, "\r")
		part := "start_line"
		switch {
		case inBody:
			part = "body"
		case line > 0 && len(l) == 0:
			inBody = true
			continue
		case line > 0:
			part = "header"
			if l[0] != ' ' && l[0] != '\t' { // a folded line continues the previous header
				if c := bytes.IndexByte(l, ':'); c > 0 {
					header = string(bytes.TrimSpace(l[:c]))
				}
			}
		}
		if !re.Match(l) {
			continue
		}
		if len(hits) == sipSearchMaxHits {
			more++
			continue
		}
		h := searchHit{Part: part, Line: line, Text: string(l[:min(len(l), sipSearchHitBytes)])}
		if part == "header" {
			h.Header = header
		}
		hits = append(hits, h)
	}
	return hits, more
}

func sipSearchTool(d Deps) server.ServerTool {
	return server.ServerTool{
		Tool: mcpgo.NewTool(toolSearchMessages,
			mcpgo.WithDescription("Find SIP messages whose start line, headers or body contain text (case-insensitive by default) or match an RE2 regex; each row names the matching lines. Oldest first, paged by next_cursor; one call scans at most 64 MiB of messages and says when it stopped early."),
			inputSchema[searchIn](), readOnly(), listOutput[searchRow]()),
		Handler: listHandler[searchIn, searchRow](d, []string{"call_id", "index"}, func(ctx context.Context, in searchIn) *mcpgo.CallToolResult {
			src := d.Source()
			sn, f := sipSnapshot(d)
			if f != nil {
				return f
			}
			// Lines are matched one at a time (CR stripped), so ^ and $
			// anchor at line ends.
			re, err := compileQuery(in)
			if err != nil {
				return fail(src, CodeInvalidArgument, "query: "+err.Error(), "give a shorter text, or check the pattern's RE2 syntax")
			}
			limit, err := sipLimit(in.Limit, sipDefaultLimit, sipMaxLimit)
			if err != nil {
				return fail(src, CodeInvalidArgument, err.Error(), "use a smaller page and follow next_cursor")
			}
			e, f := compileFilter(d, in.Filter)
			if f != nil {
				return f
			}
			from, err := searchParseCursor(src, in.Cursor)
			if err != nil {
				return fail(src, CodeInvalidArgument, err.Error(), "start again without a cursor")
			}
			rows := []searchRow{}
			page := Page{}
			var scanned int64
			var warn []string
			sn.RangeMessages(from, func(m *sip.Message) bool {
				if scanned >= sipSearchMaxBytes {
					page.Truncated, page.NextCursor = true, searchCursor(src, m.Seq)
					warn = append(warn, fmt.Sprintf("stopped after scanning %d MiB of messages: total_matched counts only those; follow next_cursor for the rest", sipSearchMaxBytes>>20))
					return false
				}
				if ctx.Err() != nil {
					return false
				}
				scanned += int64(len(m.Raw))
				hits, more := messageHits(re, m.Raw)
				if len(hits) == 0 {
					return true
				}
				if dl := sn.DialogByID(m.DialogID); dl == nil || !e.Match(dl) {
					return true
				}
				page.TotalMatched++
				if len(rows) == limit {
					if page.NextCursor == "" {
						page.Truncated, page.NextCursor = true, searchCursor(src, m.Seq)
					}
					return true
				}
				rows = append(rows, searchRow{CallID: m.CallID, Index: m.Index, Message: newMessageRow(m), Hits: nonNil(hits), More: more})
				return true
			})
			page.Returned = len(rows)
			if len(rows) < limit && page.Truncated {
				warn = append(warn, "this page is short because the scan budget ran out, not because nothing else matches")
			}
			return list(src, rows, page, warn...)
		}),
	}
}
