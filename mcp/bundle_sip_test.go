package mcp

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"fieldtap/mcp/untrusted"
	"fieldtap/services/sip"
)

// harness serves the sip and media bundles with output schemas on and
// checks every answer against its tool's advertised output schema with
// the independent validator, whatever the test then asserts.
type harness struct {
	t       *testing.T
	s       *server.MCPServer
	v       *outputValidator
	schemas map[string]json.RawMessage
	list    map[string]bool // list tools (their answers have items)
}

func newHarness(t *testing.T, d Deps) *harness {
	t.Helper()
	return newHarnessOf(t, d, slices.Concat(sipTools, mediaTools, sipForensicsTools, sipSiteTools)...)
}

// newHarnessOf is newHarness over the tools defs.
func newHarnessOf(t *testing.T, d Deps, defs ...toolDef) *harness {
	t.Helper()
	s := testServer(t, d, defs...)
	h := &harness{t: t, s: s, v: newOutputValidator(), schemas: map[string]json.RawMessage{}, list: map[string]bool{}}
	for _, lt := range listTools(t, s) {
		h.schemas[lt.Name] = lt.Output
		var in struct {
			Properties map[string]any `json:"properties"`
		}
		if err := json.Unmarshal(lt.InputSchema, &in); err != nil {
			t.Fatal(err)
		}
		_, h.list[lt.Name] = in.Properties["fields"]
	}
	return h
}

// call makes one tools/call, validates the answer and returns the
// envelope and the raw result.
func (h *harness) call(tool string, args map[string]any) (map[string]any, callResult) {
	h.t.Helper()
	r, env := callTool(h.t, h.s, tool, args)
	h.v.validate(h.t, tool, h.schemas[tool], r.StructuredContent)
	return env, r
}

// ok is call that fails the test unless the answer is ok.
func (h *harness) ok(tool string, args map[string]any) map[string]any {
	h.t.Helper()
	env, r := h.call(tool, args)
	if r.IsError {
		h.t.Fatalf("%s %v: %s", tool, args, r.Content[0].Text)
	}
	return env
}

// fails is call that fails the test unless the answer is an error with
// code; it returns the message.
func (h *harness) fails(tool string, args map[string]any, code string) string {
	h.t.Helper()
	env, r := h.call(tool, args)
	if !r.IsError {
		h.t.Fatalf("%s %v was accepted: %s", tool, args, r.Content[0].Text)
	}
	got, msg, _ := firstError(h.t, env)
	if got != code {
		h.t.Errorf("%s %v: code %s (%s), want %s", tool, args, got, msg, code)
	}
	return msg
}

func data(env map[string]any) map[string]any { return env["data"].(map[string]any) }

// fenced is what a sender's s reads as in an answer.
func fenced(s string) string { return untrusted.Open + s + untrusted.Close }

// addSIP parses raw and adds it to st at ms milliseconds after t=1000 s.
func addSIP(t testing.TB, st *sip.Store, at int, raw string) {
	t.Helper()
	var m sip.Parsed
	if err := m.Parse([]byte(raw)); err != nil {
		t.Fatal(err)
	}
	st.Add(sip.Meta{Time: time.Unix(1000, 0).Add(time.Duration(at) * time.Millisecond),
		Src: netip.MustParseAddrPort("192.0.2.1:5060"), Dst: netip.MustParseAddrPort("192.0.2.2:5060"), Transport: sip.TransportUDP}, &m, []byte(raw))
}

// sipTestDeps holds five calls: INVITE, 180, then 200 OK (calls 0, 2, 4)
// or 486 Busy Here (1, 3), each with a display name and a User-Agent.
func sipTestDeps(t *testing.T) Deps {
	t.Helper()
	st, _ := sip.New(sip.Limits{})
	msg := func(start, callID string, cseq int, method string) string {
		return fmt.Sprintf("%s\r\nVia: SIP/2.0/UDP h;branch=z9hG4bK%s%d\r\nFrom: \"Al\" <sip:1001@h>;tag=1\r\nTo: <sip:2002@h>;tag=2\r\nCall-ID: %s\r\nCSeq: %d %s\r\nUser-Agent: ua-%s\r\nContent-Length: 0\r\n\r\n",
			start, callID, cseq, callID, cseq, method, callID)
	}
	for i := range 5 {
		id := fmt.Sprintf("call-%d", i)
		addSIP(t, st, i*10, msg("INVITE sip:2002@h SIP/2.0", id, 1, "INVITE"))
		addSIP(t, st, i*10+1, msg("SIP/2.0 180 Ringing", id, 1, "INVITE"))
		code := "200 OK"
		if i%2 == 1 {
			code = "486 Busy Here"
		}
		addSIP(t, st, i*10+2, msg("SIP/2.0 "+code, id, 1, "INVITE"))
	}
	d := fullDeps(t)
	d.SIP = st
	return d
}

func TestListDialogsPagesWithTheOneCursor(t *testing.T) {
	h := newHarness(t, sipTestDeps(t))
	seen := map[string]bool{}
	cursor := ""
	for range 10 {
		args := map[string]any{"limit": 2}
		if cursor != "" {
			args["cursor"] = cursor
		}
		env := h.ok("list_dialogs", args)
		for _, it := range items(env) {
			id := it["call_id"].(string)
			if seen[id] {
				t.Errorf("%s served twice", id)
			}
			seen[id] = true
		}
		if n := pageOf(env)["total_matched"].(float64); n != 5 {
			t.Errorf("total_matched %v", n)
		}
		cursor = pageOf(env)["next_cursor"].(string)
		if cursor == "" {
			break
		}
	}
	if len(seen) != 5 {
		t.Errorf("saw %d dialogs, want 5", len(seen))
	}
	if p := pageOf(h.ok("list_dialogs", nil)); p["returned"] != 5.0 || p["truncated"] != false {
		t.Errorf("the default page (limit %d) holds all five: %v", DefaultLimit, p)
	}
}

func TestSIPTools(t *testing.T) {
	h := newHarness(t, sipTestDeps(t))
	tests := []struct {
		name  string
		tool  string
		args  map[string]any
		code  string // the error code; "" means ok
		check func(t *testing.T, env map[string]any)
	}{
		{name: "filter", tool: "list_dialogs", args: map[string]any{"filter": `final_code >= 400 and from_user ~ "^10"`},
			check: func(t *testing.T, env map[string]any) {
				if n := pageOf(env)["total_matched"]; n != 2.0 {
					t.Errorf("matched %v, want 2 busy calls", n)
				}
			}},
		{name: "row shape", tool: "list_dialogs", args: map[string]any{"limit": 1},
			check: func(t *testing.T, env map[string]any) {
				r := items(env)[0]
				if r["from_user"] != "1001" || r["to_user"] != "2002" || r["from_display"] != fenced("Al") || r["state"] != "answered" ||
					r["final_code"] != 200.0 || r["final_reason"] != fenced("OK") || r["user_agents"].([]any)[0] != fenced("ua-call-0") || r["pdd_ms"] != 1.0 {
					t.Errorf("row %v", r)
				}
			}},
		{name: "bad filter points at the column", tool: "list_dialogs", args: map[string]any{"filter": "final_code >= x"}, code: CodeInvalidFilter},
		{name: "cursor of another tool", tool: "list_dialogs", args: map[string]any{"cursor": encodeCursor("tail_dialogs", "test", rowKey{1, 0})}, code: CodeStaleCursor},
		{name: "limit over max", tool: "list_dialogs", args: map[string]any{"limit": MaxLimit + 1}, code: CodeInvalidArgument},
		{name: "limit 0", tool: "list_dialogs", args: map[string]any{"limit": 0}, code: CodeInvalidArgument},
		{name: "fields keep the id", tool: "list_dialogs", args: map[string]any{"fields": []any{"state"}},
			check: func(t *testing.T, env map[string]any) {
				if r := items(env)[0]; len(r) != 2 || r["call_id"] == nil || r["state"] == nil {
					t.Errorf("row %v", r)
				}
			}},
		{name: "get_dialog", tool: "get_dialog", args: map[string]any{"call_id": "call-1"},
			check: func(t *testing.T, env map[string]any) {
				msgs := data(env)["messages"].([]any)
				if len(msgs) != 3 || msgs[2].(map[string]any)["start_line"] != fenced("SIP/2.0 486 Busy Here") {
					t.Errorf("messages %v", msgs)
				}
				if s := data(env)["dialog"].(map[string]any)["state"]; s != "failed" {
					t.Errorf("state %v", s)
				}
			}},
		{name: "get_dialog unknown", tool: "get_dialog", args: map[string]any{"call_id": "nope"}, code: CodeNotFound},
		{name: "get_dialog needs call_id", tool: "get_dialog", args: map[string]any{}, code: CodeInvalidArgument},
		{name: "get_message", tool: "get_message", args: map[string]any{"call_id": "call-0", "index": 0},
			check: func(t *testing.T, env map[string]any) {
				d := data(env)
				if d["message"].(map[string]any)["start_line"] != fenced("INVITE sip:2002@h SIP/2.0") || len(d["headers"].([]any)) != 7 {
					t.Errorf("message %v", d)
				}
				if hd := d["headers"].([]any)[1].(map[string]any); hd["name"] != "From" || hd["value"] != fenced(`"Al" <sip:1001@h>;tag=1`) {
					t.Errorf("header %v", hd)
				}
			}},
		{name: "get_message index out of range", tool: "get_message", args: map[string]any{"call_id": "call-0", "index": 3}, code: CodeNotFound},
		{name: "get_message index over the schema's bound", tool: "get_message", args: map[string]any{"call_id": "call-0", "index": sip.DefaultMessagesPerDialog}, code: CodeInvalidArgument},
		{name: "aggregate adds up", tool: "aggregate_dialogs", args: map[string]any{"dimension": "final_code", "max_buckets": 1},
			check: func(t *testing.T, env map[string]any) {
				d := data(env)
				b := d["buckets"].([]any)
				sum := d["other_count"].(float64)
				for _, x := range b {
					sum += x.(map[string]any)["count"].(float64)
				}
				if sum != d["total_matched"].(float64) || sum != 5 || len(b) != 1 || d["other_buckets"] != 1.0 {
					t.Errorf("aggregate %v", d)
				}
			}},
		{name: "aggregate unknown dimension", tool: "aggregate_dialogs", args: map[string]any{"dimension": "colour"}, code: CodeInvalidArgument},
		{name: "find_problems failed", tool: "find_problems", args: map[string]any{"problems": []any{"failed"}},
			check: func(t *testing.T, env map[string]any) {
				rows := items(env)
				if len(rows) != 2 || rows[0]["problems"].([]any)[0] != "failed" || rows[0]["call_id"] != "call-1" {
					t.Errorf("rows %v", rows)
				}
			}},
		{name: "find_problems unknown alias", tool: "find_problems", args: map[string]any{"problems": []any{"reg-flood"}}, code: CodeInvalidArgument},
		{name: "triage busy", tool: "triage_call", args: map[string]any{"call_id": "call-1"},
			check: func(t *testing.T, env map[string]any) {
				d := data(env)
				if d["outcome"] != "failed" || d["cause"] != fenced("Busy Here") || d["cause_from"] != "status" || d["status_text"] != "Busy Here" || d["final_code"] != 486.0 {
					t.Errorf("triage %v", d)
				}
			}},
		{name: "validate_filter bad", tool: "validate_filter", args: map[string]any{"filter": "method = INVITE"},
			check: func(t *testing.T, env map[string]any) {
				d := data(env)
				if d["valid"] != false || d["column"] != 8.0 || !strings.HasSuffix(d["pointer"].(string), "       ^") {
					t.Errorf("validate %v", d)
				}
			}},
		{name: "validate_filter good", tool: "validate_filter", args: map[string]any{"filter": "method == INVITE"},
			check: func(t *testing.T, env map[string]any) {
				d := data(env)
				if d["valid"] != true || d["column"] != nil || len(d["fields"].([]any)) != len(sip.Schema) {
					t.Errorf("validate %v", d)
				}
			}},
		{name: "report", tool: "get_capture_report",
			check: func(t *testing.T, env map[string]any) {
				d := data(env)
				if d["store"].(map[string]any)["requests"].(map[string]any)["INVITE"] != 5.0 || d["limits"].(map[string]any)["messages_per_dialog"] != float64(sip.DefaultMessagesPerDialog) {
					t.Errorf("report %v", d)
				}
				if d["decode"] == nil || d["streams"] == nil || d["counters_reason"] != nil {
					t.Errorf("SPAN counters: decode %v, streams %v, counters_reason %v", d["decode"], d["streams"], d["counters_reason"])
				}
			}},
		{name: "unknown argument", tool: "triage_call", args: map[string]any{"callid": "x"}, code: CodeInvalidArgument},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.code != "" {
				h.fails(tc.tool, tc.args, tc.code)
				return
			}
			env := h.ok(tc.tool, tc.args)
			if tc.check != nil {
				tc.check(t, env)
			}
		})
	}
}

// TestGetDialogPagesMessages: get_dialog pages messages with the one
// cursor, and a cursor of one dialog is refused for another.
func TestGetDialogPagesMessages(t *testing.T) {
	h := newHarness(t, sipTestDeps(t))
	env := h.ok("get_dialog", map[string]any{"call_id": "call-2", "limit": 2})
	p := data(env)["messages_page"].(map[string]any)
	if len(data(env)["messages"].([]any)) != 2 || p["total_matched"] != 3.0 || p["truncated"] != true {
		t.Fatalf("first page %v", data(env))
	}
	next := map[string]any{"call_id": "call-2", "cursor": p["next_cursor"]}
	msgs := data(h.ok("get_dialog", next))["messages"].([]any)
	if len(msgs) != 1 || msgs[0].(map[string]any)["index"] != 2.0 {
		t.Errorf("second page %v", msgs)
	}
	next["call_id"] = "call-3"
	h.fails("get_dialog", next, CodeStaleCursor)
}

// TestSIPToolsWithoutASPANPort: a box without a SPAN port has its SIP
// store and media analyser, empty, and the tools say there is nothing.
func TestSIPToolsWithoutASPANPort(t *testing.T) {
	h := newHarness(t, fullDeps(t))
	for _, tool := range []string{"list_dialogs", "tail_dialogs", "rtp_streams", "dtmf_events"} {
		if rows := items(h.ok(tool, nil)); len(rows) != 0 {
			t.Errorf("%s: %v", tool, rows)
		}
	}
	if d := data(h.ok("get_capture_report", nil)); len(d["dialogs_by_state"].(map[string]any)) != 0 {
		t.Errorf("get_capture_report: %v", d)
	}
	if d := data(h.ok("await_condition", map[string]any{"filter": "", "timeout_seconds": 1})); d["met"] != false || d["matched"] != 0.0 {
		t.Errorf("await_condition: %v", d)
	}
}

// TestBoxVocabularyIsBare: what the box computed (states, codes,
// transports, buckets, identifiers) is never fenced; only a dimension
// whose values senders write is.
func TestBoxVocabularyIsBare(t *testing.T) {
	h := newHarness(t, sipTestDeps(t))
	for _, dim := range sip.Dimensions {
		for _, tool := range []string{"aggregate_dialogs", "group_dialogs"} {
			env, r := h.call(tool, map[string]any{"dimension": dim})
			if r.IsError {
				t.Fatalf("%s %s: %s", tool, dim, r.Content[0].Text)
			}
			key := map[string]string{"aggregate_dialogs": "buckets", "group_dialogs": "groups"}[tool]
			for _, b := range data(env)[key].([]any) {
				b := b.(map[string]any)
				v, hasValue := b["value"].(string)
				txt, hasText := b["text"].(string)
				if hasValue == hasText {
					t.Errorf("%s %s: bucket %v has both or neither of value and text", tool, dim, b)
				}
				if sip.TextDimension(dim) != hasText {
					t.Errorf("%s %s: bucket %v; sender text is fenced, the box's words are not", tool, dim, b)
				}
				if hasValue && strings.Contains(v, untrusted.Open) || hasText && !strings.HasPrefix(txt, untrusted.Open) {
					t.Errorf("%s %s: bucket %v", tool, dim, b)
				}
			}
			if sip.TextDimension(dim) != (len(r.Content) == 2) {
				t.Errorf("%s %s: %d content blocks; the provenance note comes with fenced text only", tool, dim, len(r.Content))
			}
		}
	}
	env := h.ok("group_dialogs", map[string]any{"dimension": "to_user"})
	if g := data(env)["groups"].([]any)[0].(map[string]any); g["value"] != "2002" {
		t.Errorf("to_user is an identifier, bare as in list_dialogs: %v", g)
	}
	env = h.ok("aggregate_dialogs", map[string]any{"dimension": "state"})
	if b := data(env)["buckets"].([]any)[0].(map[string]any); b["value"] != "answered" || b["count"] != 3.0 {
		t.Errorf("state bucket %v", b)
	}
}

// TestUnfilteredPagingMatchesTheFilteredPath: list_dialogs without a
// filter reads only the page's dialogs; it must page exactly as a filter
// that matches every dialog does, evicted dialogs included.
func TestUnfilteredPagingMatchesTheFilteredPath(t *testing.T) {
	d := testDeps()
	d.SIP, _ = sip.New(sip.Limits{Dialogs: 7})
	for i := range 10 { // three evicted
		addSIP(t, d.SIP, i, fmt.Sprintf("OPTIONS sip:x SIP/2.0\r\nVia: SIP/2.0/UDP h;branch=z9hG4bK%d\r\nFrom: <sip:a@h>;tag=1\r\nTo: <sip:b@h>\r\nCall-ID: o-%d\r\nCSeq: 1 OPTIONS\r\n\r\n", i, i))
	}
	h := newHarness(t, d)
	walk := func(filter string, cursor any) (ids []string, pages []string) {
		for range 10 {
			args := map[string]any{"limit": 3, "filter": filter}
			if cursor != nil {
				args["cursor"] = cursor
			}
			env := h.ok("list_dialogs", args)
			for _, r := range items(env) {
				ids = append(ids, r["call_id"].(string))
			}
			p := pageOf(env)
			pages = append(pages, fmt.Sprint(p["returned"], p["total_matched"], p["truncated"], len(env["warnings"].([]any))))
			if cursor = p["next_cursor"]; cursor == "" {
				break
			}
		}
		return ids, pages
	}
	for _, from := range []any{nil, encodeCursor("list_dialogs", "test", key1(1)), encodeCursor("list_dialogs", "test", key1(5))} {
		fastIDs, fastPages := walk("", from)
		slowIDs, slowPages := walk("messages >= 0", from)
		if fmt.Sprint(fastIDs) != fmt.Sprint(slowIDs) || fmt.Sprint(fastPages) != fmt.Sprint(slowPages) {
			t.Errorf("from %v: unfiltered %v %v, filtered %v %v", from, fastIDs, fastPages, slowIDs, slowPages)
		}
		if from == nil && len(fastIDs) != 7 {
			t.Errorf("walked %v, want the seven kept", fastIDs)
		}
	}
}

// TestSIPAndMediaToolsAreDocumented: each tool of the two bundles has its
// section in docs/mcp-tools.md, and the section names every argument the
// tool takes (limit, cursor and fields are described once for all).
func TestSIPAndMediaToolsAreDocumented(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "mcp-tools.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, td := range append(slices.Clone(sipTools), mediaTools...) {
		i := td.info()
		_, section, found := strings.Cut(string(doc), "### "+i.name+"\n")
		if !found {
			t.Errorf("docs/mcp-tools.md has no section for %s", i.name)
			continue
		}
		if end := strings.Index(section, "\n#"); end >= 0 {
			section = section[:end]
		}
		for _, arg := range i.input().names() {
			if arg == "limit" || arg == "cursor" || arg == "fields" {
				continue
			}
			if !strings.Contains(section, "`"+arg+"`") {
				t.Errorf("the section of %s does not name its argument %s", i.name, arg)
			}
		}
	}
}
