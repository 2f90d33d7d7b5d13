package mcp

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

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

func (in searchIn) compile() (*matcher, error) {
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
	m := &matcher{re: re}
	if !in.Regex {
		m.lit, m.exact = newLiteral([]byte(in.Query), !in.CaseSensitive), true
		return m, nil
	}
	// Every match of the pattern begins with its literal prefix (in
	// either case under the (?i) added above): a message without it has
	// no matching line, whatever the regexp says of the lines of one with
	// it.
	alone := re
	if !in.CaseSensitive {
		alone, _ = regexp.Compile(string(in.Query))
	}
	if alone != nil {
		if p, _ := alone.LiteralPrefix(); p != "" {
			m.lit = newLiteral([]byte(p), !in.CaseSensitive)
		}
	}
	return m, nil
}

// matcher finds the lines of a message that search_messages' query
// matches: re, run on each line (CR stripped, SDES keys masked), says
// what a match is. Text every matching line holds (the query itself when
// it is plain text, else the pattern's literal prefix) is first looked
// for in the whole message with byte searches: a message without it has
// no matching line, and most of a search's messages are skipped at
// memory speed instead of running the regexp on each of their lines (a
// second a call over a full scan: docs/benchmarks.md).
type matcher struct {
	re  *regexp.Regexp
	lit literal
	// exact: a line matches exactly when it holds lit (plain text), so
	// lines are matched by lit, not re.
	exact bool
}

// literal is text looked for bytewise: ASCII without a line break
// (lower-cased when fold), else nil. A line holds it, bytewise and
// ignoring ASCII case when fold, exactly when (?i) and the quoted text
// match the line: an ASCII byte is never part of another character in
// UTF-8, and the only characters outside ASCII that (?i) folds onto
// ASCII are K (Kelvin sign) and ſ (long s), onto k and s; a message with
// either, when the text has k or s (wide), is left to the regexp.
type literal struct {
	text   []byte
	fold   bool
	wide   bool
	anchor int // the byte of text looked for first: the least common in SIP text
}

// wideFolds are the characters (?i) matches with an ASCII k or s.
var wideFolds = [...][]byte{[]byte("\u212a"), []byte("\u017f")}

// newLiteral is the literal of q, none when q is not ASCII text without
// a line break.
func newLiteral(q []byte, fold bool) literal {
	for _, c := range q {
		if c >= utf8.RuneSelf || c == '\r' || c == '\n' {
			return literal{}
		}
	}
	l := literal{text: bytes.Clone(q), fold: fold}
	if fold {
		l.text = lowerASCII(q)
		l.wide = bytes.ContainsAny(l.text, "ks")
	}
	for i, c := range l.text {
		if sipCommon(c) < sipCommon(l.text[l.anchor]) {
			l.anchor = i
		}
	}
	return l
}

// sipCommon ranks a (lower-case) byte by how often SIP messages carry it:
// higher is more common.
func sipCommon(c byte) int {
	const byUse = "zqjxkvybwgfmuhpdclrsnoiate0123456789.:;=/<>@- \t"
	return strings.IndexByte(byUse, c) + 1
}

// scan reports whether a line of raw matches and, with hits, which: at
// most searchMaxHits of them and how many more.
func (m *matcher) scan(raw []byte, hits bool) (bool, []searchHit, int) {
	masked := hasSDESKey(raw)
	match := m.re.Match
	if m.lit.text != nil && !(m.lit.wide && (bytes.Contains(raw, wideFolds[0]) || bytes.Contains(raw, wideFolds[1]))) {
		// Masking changes what a line holds: only an unmasked message is
		// told from its whole bytes (no line holds a line break).
		if !masked && !m.lit.contains(raw) {
			return false, nil, 0
		}
		if m.exact {
			if !masked && !hits {
				return true, nil, 0
			}
			match = m.lit.contains
		}
	}
	return lineHits(raw, masked, match, hits)
}

// contains reports whether b holds l.text (ignoring ASCII case when
// l.fold): the anchor byte found with IndexByte in each of its cases,
// the rest compared where it is. Past maxNearMisses places where the
// anchor is but the text is not (a sender's run of one letter), the rest
// of b is lower-cased and searched as bytes.Index does, which stays
// linear where comparing at every place would not.
func (l *literal) contains(b []byte) bool {
	const maxNearMisses = 64
	q := l.text
	if !l.fold {
		return bytes.Contains(b, q)
	}
	a := l.anchor
	lo, up := q[a], q[a]
	if 'a' <= lo && lo <= 'z' {
		up = lo - 'a' + 'A'
	}
	end := len(b) - (len(q) - 1 - a) // the anchor lies before end
	nextLo, nextUp := -1, -1         // the next place of each case at or after i, or end for none
	for i, misses := a, 0; i < end; misses++ {
		if misses == maxNearMisses {
			return bytes.Contains(lowerASCII(b[i-a:]), q)
		}
		if nextLo < i {
			nextLo = indexFrom(b[:end], i, lo)
		}
		if nextUp < i {
			nextUp = indexFrom(b[:end], i, up)
		}
		j := min(nextLo, nextUp)
		if j >= end {
			return false
		}
		if equalLower(b[j-a:j-a+len(q)], q) {
			return true
		}
		i = j + 1
	}
	return false
}

// indexFrom is the place of c in b at or after i, or len(b).
func indexFrom(b []byte, i int, c byte) int {
	if j := bytes.IndexByte(b[i:], c); j >= 0 {
		return i + j
	}
	return len(b)
}

// lowerASCII is a copy of b with its ASCII letters lower-cased, and
// nothing else changed (bytes.ToLower folds other characters too, İ
// into i, which (?i) does not match).
func lowerASCII(b []byte) []byte {
	out := make([]byte, len(b))
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		out[i] = c
	}
	return out
}

// equalLower reports whether s, ASCII letters lower-cased, is q.
func equalLower(s, q []byte) bool {
	for i, c := range s {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != q[i] {
			return false
		}
	}
	return true
}

// hasSDESKey reports whether raw holds "inline:" in any case, which
// srtp.Redact masks what follows: a message without one is matched as
// captured.
func hasSDESKey(raw []byte) bool {
	const marker = "inline"
	for i := len(marker); i < len(raw); {
		j := bytes.IndexByte(raw[i:], ':')
		if j < 0 {
			return false
		}
		i += j
		if equalLower(raw[i-len(marker):i], []byte(marker)) {
			return true
		}
		i++
	}
	return false
}

// lineHits reports whether a line of raw matches and, with all, which,
// naming the part (at most searchMaxHits, and how many more). masked:
// SDES keys are masked before matching, so a hit shows none and a pattern
// cannot probe one a character at a time.
func lineHits(raw []byte, masked bool, match func([]byte) bool, all bool) (bool, []searchHit, int) {
	var hits []searchHit
	more, line, inBody := 0, 0, false
	var header []byte // the name, made a string for a hit alone
	for rest := raw; len(rest) > 0; line++ {
		l := rest
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			l, rest = rest[:i], rest[i+1:]
		} else {
			rest = nil
		}
		l = bytes.TrimRight(l, "\r")
		if masked {
			l, _ = srtp.Redact(l)
		}
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
					header = bytes.TrimSpace(l[:c])
				}
			}
		}
		if !match(l) {
			continue
		}
		if !all {
			return true, nil, 0
		}
		if len(hits) == searchMaxHits {
			more++
			continue
		}
		h := searchHit{Part: part, Line: line, Text: untrusted.Text(l[:min(len(l), searchHitBytes)])}
		if part == "header" {
			h.Header = string(header)
		}
		hits = append(hits, h)
	}
	return len(hits) > 0, hits, more
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
		mt, err := in.compile()
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
			// Past a full page a match is only counted: its lines are not
			// looked for.
			ok, hits, more := mt.scan(m.Raw, pg.room())
			if !ok {
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
