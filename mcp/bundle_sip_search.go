package mcp

import (
	"bytes"
	"fmt"
	"regexp"

	"github.com/google/jsonschema-go/jsonschema"

	"fieldtap/mcp/untrusted"
	"fieldtap/services/filter"
	"fieldtap/services/sip"
	"fieldtap/services/srtp"
)

// search_messages bounds.
const (
	// searchMaxBytes bounds the message bytes one call scans, so a search
	// over a full store (512 MiB) answers in bounded time; next_cursor
	// reaches the rest.
	searchMaxBytes = 64 << 20
	searchMaxHits  = 5   // matching lines reported per message; more are counted
	searchHitBytes = 200 // bytes of a matching line shown (fencing caps at 256)
)

// queryArg is the text or RE2 pattern search_messages looks for; it has
// the filter language's pattern bound.
type queryArg string

func (queryArg) argSchema() *jsonschema.Schema {
	n := filter.MaxPattern
	return &jsonschema.Schema{Type: "string", MaxLength: &n,
		Description: fmt.Sprintf("text, or an RE2 pattern with regex; 1 to %d bytes", filter.MaxPattern)}
}

type searchIn struct {
	Query         queryArg  `json:"query"`
	Regex         bool      `json:"regex,omitempty" jsonschema:"query is RE2 (^ and $ at line ends)"`
	CaseSensitive bool      `json:"case_sensitive,omitempty" jsonschema:"match case exactly"`
	Filter        filterArg `json:"filter,omitempty"`
	Paging
	Projection
}

type searchHit struct {
	Part   string         `json:"part" jsonschema:"start_line, header or body"`
	Header string         `json:"header,omitempty" jsonschema:"the header's name (a token the parser checked)"`
	Line   int            `json:"line" jsonschema:"0 is the start line"`
	Text   untrusted.Text `json:"text" jsonschema:"the matching line, at most 200 bytes"`
}

type searchRow struct {
	CallID  string      `json:"call_id"`
	Index   int         `json:"index" jsonschema:"the message's index in its dialog, for get_message"`
	Message messageRow  `json:"message"`
	Hits    []searchHit `json:"hits"`
	More    int         `json:"more_hits" jsonschema:"matching lines past the first five"`
}

func (in searchIn) compile() (*regexp.Regexp, error) {
	if in.Query == "" {
		return nil, argErr("query", "give the text to look for", "is empty")
	}
	pat := string(in.Query)
	if !in.Regex {
		pat = regexp.QuoteMeta(pat)
	}
	if !in.CaseSensitive {
		pat = "(?i)" + pat
	}
	re, err := regexp.Compile(pat)
	if err != nil {
		return nil, argErr("query", "check the pattern's RE2 syntax, or search for plain text without regex", "not an RE2 expression: %v", err)
	}
	return re, nil
}

// messageHits reports the lines of raw that re matches, naming the part.
func messageHits(re *regexp.Regexp, raw []byte) ([]searchHit, int) {
	hits := []searchHit{}
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
		// SDES keys are masked before matching: a hit shows none, and a
		// pattern cannot probe one a character at a time.
		l, _ = srtp.Redact(l)
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
		if len(hits) == searchMaxHits {
			more++
			continue
		}
		h := searchHit{Part: part, Line: line, Text: untrusted.Text(l[:min(len(l), searchHitBytes)])}
		if part == "header" {
			h.Header = header
		}
		hits = append(hits, h)
	}
	return hits, more
}

var searchMessages = tool[searchIn, page[searchRow]]{
	name:  "search_messages",
	reads: readsSIP,
	desc:  fmt.Sprintf("SIP messages whose lines contain text (case-insensitive by default) or match an RE2 regex, with the matching lines. Oldest first, paged; a call scans at most %d MiB and warns when it stops early.", searchMaxBytes>>20),
	hints: readOnly(),
	ids:   []string{"call_id", "index"},
	text:  []textSource{textSIP},
	run: func(c *call, in searchIn) (page[searchRow], error) {
		sn := c.d.SIP.Snapshot()
		// Lines are matched one at a time (CR stripped), so ^ and $
		// anchor at line ends.
		re, err := in.compile()
		if err != nil {
			return page[searchRow]{}, err
		}
		e, err := in.Filter.compile()
		if err != nil {
			return page[searchRow]{}, err
		}
		pg, err := newPager(c, in.Paging)
		if err != nil {
			return page[searchRow]{}, err
		}
		if first, _ := sn.MessageSeqs(); pg.resumed && pg.from[0] < first {
			pg.evicted(first-pg.from[0], "messages")
		}
		rows := []searchRow{}
		var scanned int64
		cut := false
		sn.RangeMessages(pg.from[0], func(m *sip.Message) bool {
			if scanned >= searchMaxBytes {
				pg.stopBefore(key1(m.Seq))
				cut = true
				return false
			}
			if c.ctx.Err() != nil {
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
			if pg.offer(key1(m.Seq)) {
				rows = append(rows, searchRow{CallID: m.CallID, Index: m.Index, Message: messageRowOf(m), Hits: hits, More: more})
			}
			return true
		})
		if err := c.ctx.Err(); err != nil {
			return page[searchRow]{}, fmt.Errorf("search_messages cancelled: %w", err)
		}
		if cut {
			c.warnf("stopped after scanning %d MiB of messages: total_matched counts only those, and next_cursor resumes the scan", searchMaxBytes>>20)
			if len(rows) < in.Limit.rows() {
				c.warnf("this page is short because the scan budget ran out, not because nothing else matches")
			}
		}
		return page[searchRow]{Items: rows, Page: pg.page()}, nil
	},
}

// stopBefore ends a scan that stopped early at k: unless a later match
// already set it, the next page resumes at k, and the page is truncated.
func (pg *pager) stopBefore(k rowKey) {
	if pg.next == "" {
		pg.next = encodeCursor(pg.c.req.Params.Name, pg.c.src.CaptureIdentity, k)
	}
}
