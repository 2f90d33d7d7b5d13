package mcp

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"fieldtap/drivers/wire"

	"fieldtap/mcp/untrusted"
	"fieldtap/services/framestore"
	"fieldtap/services/netdecode"
	"fieldtap/services/ring"
	"fieldtap/services/sip"
)

func TestSIPMoreTools(t *testing.T) {
	h := newHarness(t, sipTestDeps(t))
	tests := []sipMoreCase{
		{name: "search text", tool: "search_messages", args: map[string]any{"query": "busy here"},
			check: func(t *testing.T, env map[string]any) {
				rows := items(env)
				if len(rows) != 2 {
					t.Fatalf("rows %v", rows)
				}
				hit := rows[0]["hits"].([]any)[0].(map[string]any)
				if hit["part"] != "start_line" || hit["line"] != 0.0 || hit["text"] != fenced("SIP/2.0 486 Busy Here") || rows[0]["index"] != 2.0 {
					t.Errorf("row %v", rows[0])
				}
			}},
		{name: "search regex in a header, paged", tool: "search_messages", args: map[string]any{"query": "^User-Agent: ua-call-[0-4]$", "regex": true, "case_sensitive": true, "limit": 2},
			check: func(t *testing.T, env map[string]any) {
				p := pageOf(env)
				if p["total_matched"] != 15.0 || p["returned"] != 2.0 || p["next_cursor"] == "" {
					t.Errorf("page %v", p)
				}
				hit := items(env)[0]["hits"].([]any)[0].(map[string]any)
				if hit["part"] != "header" || hit["header"] != "User-Agent" {
					t.Errorf("hit %v", hit)
				}
			}},
		{name: "search bad regex", tool: "search_messages", args: map[string]any{"query": "(", "regex": true}, code: CodeInvalidArgument},
		{name: "search empty query", tool: "search_messages", args: map[string]any{"query": ""}, code: CodeInvalidArgument},
		{name: "search needs a query", tool: "search_messages", args: map[string]any{}, code: CodeInvalidArgument},
		{name: "search fields keep the ids", tool: "search_messages", args: map[string]any{"query": "INVITE", "fields": []any{"hits"}},
			check: func(t *testing.T, env map[string]any) {
				r := items(env)[0]
				if _, has := r["message"]; has || r["call_id"] == nil || r["index"] == nil || r["hits"] == nil {
					t.Errorf("row %v", r)
				}
			}},
		{name: "group by from_user", tool: "group_dialogs", args: map[string]any{"dimension": "from_user"},
			check: func(t *testing.T, env map[string]any) {
				all := data(env)["overall"].(map[string]any)
				asr := all["asr"].(map[string]any)
				// 3 answered of 5 attempts; the 2 busy count for NER.
				if asr["value"] != 0.6 || asr["population"] != 5.0 || asr["unit"] != "ratio" {
					t.Errorf("asr %v", asr)
				}
				if ner := all["ner"].(map[string]any); ner["value"] != 1.0 {
					t.Errorf("ner %v", ner)
				}
				acd := all["acd"].(map[string]any)
				if acd["value"] != nil || acd["null_reason"] == "" || acd["population"] != 0.0 {
					t.Errorf("acd %v: no BYE, so no basis", acd)
				}
				if p := all["pdd_p95"].(map[string]any); p["value"] != 1.0 || p["unit"] != "ms" {
					t.Errorf("pdd %v", p)
				}
				if data(env)["other"] != nil || data(env)["groups"].([]any)[0].(map[string]any)["value"] != "1001" {
					t.Errorf("groups %v", data(env))
				}
			}},
		{name: "group past max_groups", tool: "group_dialogs", args: map[string]any{"dimension": "final_code", "max_groups": 1},
			check: func(t *testing.T, env map[string]any) {
				d := data(env)
				if d["other_groups"] != 1.0 || d["other"].(map[string]any)["dialogs"] != 2.0 {
					t.Errorf("group %v", d)
				}
			}},
		{name: "timeline keeps empty buckets", tool: "timeline", args: map[string]any{"bucket_seconds": 1, "since": "1970-01-01T00:16:38Z", "until": "1970-01-01T00:16:42Z"},
			check: func(t *testing.T, env map[string]any) {
				b := data(env)["buckets"].([]any)
				if len(b) != 4 || b[0].(map[string]any)["dialogs"] != 0.0 || b[2].(map[string]any)["dialogs"] != 5.0 || data(env)["total_matched"] != 5.0 {
					t.Errorf("buckets %v", b)
				}
			}},
		{name: "timeline too many buckets", tool: "timeline", args: map[string]any{"bucket_seconds": 1, "since": "1970-01-01T00:00:00Z", "until": "1971-01-01T00:00:00Z"}, code: CodeInvalidArgument},
		// Without bucket_seconds: the first of 60, 300, 900, 3600, 21600
		// and 86400 s making at most 1,000 buckets, else a day's up to
		// 10,000 (the five dialogs were all created at 1970-01-01T00:16:40Z).
		timelineWidth("a short span", nil, 60, 1),
		timelineWidth("two days", map[string]any{"since": "1970-01-01T00:00:00Z", "until": "1970-01-03T00:00:00Z"}, 300, 576),
		timelineWidth("a year", map[string]any{"since": "1970-01-01T00:00:00Z", "until": "1971-01-01T00:00:00Z"}, 86400, 365),
		timelineWidth("five years", map[string]any{"since": "1970-01-01T00:00:00Z", "until": "1975-01-01T00:00:00Z"}, 86400, 1826),
		{name: "timeline without bucket_seconds past a day's buckets", tool: "timeline", args: map[string]any{"since": "1970-01-01T00:00:00Z", "until": "2000-01-01T00:00:00Z"}, code: CodeInvalidArgument},
		{name: "timeline until before since", tool: "timeline", args: map[string]any{"since": "1970-01-01T00:16:42Z", "until": "1970-01-01T00:16:38Z"}, code: CodeInvalidArgument},
		{name: "timeline bad time", tool: "timeline", args: map[string]any{"since": "yesterday"}, code: CodeInvalidArgument},
		{name: "tail without cursor is the newest", tool: "tail_dialogs", args: map[string]any{"limit": 2},
			check: func(t *testing.T, env map[string]any) {
				rows := items(env)
				if len(rows) != 2 || rows[1]["call_id"] != "call-4" || pageOf(env)["next_cursor"] == "" || pageOf(env)["total_matched"] != 5.0 {
					t.Errorf("tail %v", env)
				}
			}},
		{name: "await met at once", tool: "await_condition", args: map[string]any{"filter": "final_code == 486", "min_count": 2},
			check: func(t *testing.T, env map[string]any) {
				d := data(env)
				if d["met"] != true || d["matched"] != 2.0 || len(d["dialogs"].([]any)) != 2 {
					t.Errorf("await %v", d)
				}
			}},
		{name: "await deadline is an answer", tool: "await_condition", args: map[string]any{"filter": "final_code == 404", "timeout_seconds": 1},
			check: func(t *testing.T, env map[string]any) {
				d := data(env)
				if d["met"] != false || d["deadline_passed"] != true || d["waited_ms"].(float64) < 1000 || len(env["warnings"].([]any)) != 1 {
					t.Errorf("await %v", env)
				}
			}},
		{name: "await timeout over 60", tool: "await_condition", args: map[string]any{"filter": "", "timeout_seconds": 61}, code: CodeInvalidArgument},
		{name: "await needs a filter", tool: "await_condition", args: map[string]any{}, code: CodeInvalidArgument},
		{name: "await bad filter", tool: "await_condition", args: map[string]any{"filter": "state ="}, code: CodeInvalidFilter},
		{name: "ladder", tool: "render_ladder", args: map[string]any{"call_id": "call-1"},
			check: func(t *testing.T, env map[string]any) {
				d := data(env)
				l := d["ladder"].(string)
				for _, want := range []string{"192.0.2.1:5060", "192.0.2.2:5060", "#0 INVITE", "#2 486 Busy Here (INVITE)"} {
					if !strings.Contains(l, want) {
						t.Errorf("ladder lacks %q:\n%s", want, l)
					}
				}
				if strings.Contains(l, untrusted.Open) {
					t.Errorf("the drawing is the box's own, yet fenced:\n%s", l)
				}
				lines := d["start_lines"].([]any)
				if len(lines) != 3 || lines[2].(map[string]any)["start_line"] != fenced("SIP/2.0 486 Busy Here") || lines[2].(map[string]any)["index"] != 2.0 {
					t.Errorf("start lines %v", lines)
				}
			}},
		{name: "ladder max_messages", tool: "render_ladder", args: map[string]any{"call_id": "call-1", "max_messages": 1},
			check: func(t *testing.T, env map[string]any) {
				if d := data(env); d["messages_not_drawn"] != 2.0 || len(d["start_lines"].([]any)) != 1 || len(env["warnings"].([]any)) != 1 {
					t.Errorf("ladder %v", env)
				}
			}},
		{name: "ladder max_messages over the bound", tool: "render_ladder", args: map[string]any{"call_id": "call-1", "max_messages": sip.DefaultMessagesPerDialog + 1}, code: CodeInvalidArgument},
		{name: "export needs one selector", tool: "export_capture", args: map[string]any{}, code: CodeInvalidArgument},
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

// TestTailCursorSeesEachUpdateOnce polls with the cursor across new messages.
func TestTailCursorSeesEachUpdateOnce(t *testing.T) {
	d := sipTestDeps(t)
	h := newHarness(t, d)
	cursor := pageOf(h.ok("tail_dialogs", nil))["next_cursor"].(string)
	env := h.ok("tail_dialogs", map[string]any{"cursor": cursor})
	if n := len(items(env)); n != 0 || pageOf(env)["next_cursor"] != cursor {
		t.Fatalf("no change yet, got %d rows and cursor %v", n, pageOf(env)["next_cursor"])
	}
	addSIP(t, d.SIP, 1000, "BYE sip:2002@h SIP/2.0\r\nVia: SIP/2.0/UDP h;branch=z9hG4bKbye\r\nFrom: <sip:1001@h>;tag=1\r\nTo: <sip:2002@h>;tag=2\r\nCall-ID: call-0\r\nCSeq: 2 BYE\r\nContent-Length: 0\r\n\r\n")
	env = h.ok("tail_dialogs", map[string]any{"cursor": cursor})
	rows := items(env)
	if len(rows) != 1 || rows[0]["call_id"] != "call-0" || rows[0]["state"] != "ended" {
		t.Fatalf("after a BYE: %v", rows)
	}
	again := h.ok("tail_dialogs", map[string]any{"cursor": pageOf(env)["next_cursor"]})
	if len(items(again)) != 0 {
		t.Errorf("the BYE came back twice: %v", items(again))
	}
	h.fails("tail_dialogs", map[string]any{"cursor": pageOf(h.ok("list_dialogs", map[string]any{"limit": 1}))["next_cursor"]}, CodeStaleCursor)
}

// TestTailPagesWhatIsWaiting: with a cursor, more updates than limit come
// limit at a time, truncated until the last.
func TestTailPagesWhatIsWaiting(t *testing.T) {
	d := testDeps()
	d.SIP, _ = sip.New(sip.Limits{})
	h := newHarness(t, d)
	cursor := pageOf(h.ok("tail_dialogs", nil))["next_cursor"].(string)
	for i := range 5 {
		addSIP(t, d.SIP, i, fmt.Sprintf("OPTIONS sip:x SIP/2.0\r\nVia: SIP/2.0/UDP h;branch=z9hG4bK%d\r\nFrom: <sip:a@h>;tag=1\r\nTo: <sip:b@h>\r\nCall-ID: o-%d\r\nCSeq: 1 OPTIONS\r\n\r\n", i, i))
	}
	var got []string
	for range 5 {
		env := h.ok("tail_dialogs", map[string]any{"cursor": cursor, "limit": 2})
		for _, r := range items(env) {
			got = append(got, r["call_id"].(string))
		}
		cursor = pageOf(env)["next_cursor"].(string)
		if pageOf(env)["truncated"] == false {
			break
		}
	}
	if strings.Join(got, ",") != "o-0,o-1,o-2,o-3,o-4" {
		t.Errorf("polled %v", got)
	}
}

// TestExportCaptureOpensInTshark feeds frames through the analyser with
// frame references, exports one dialog and has tshark read the file back.
func TestExportCaptureOpensInTshark(t *testing.T) {
	st, _ := sip.New(sip.Limits{})
	fs, err := framestore.New(ring.Limits{Items: 1000, Bytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	an := sip.NewAnalyser(st, netdecode.Options{})
	ex := sip.NewExporter(t.TempDir(), netdecode.Options{})
	ex.AddPort("span0", fs)
	for i, start := range []string{"INVITE sip:b@h SIP/2.0", "SIP/2.0 180 Ringing", "SIP/2.0 200 OK", "OPTIONS sip:b@h SIP/2.0"} {
		callID, method := "exp-1", "INVITE"
		if strings.HasPrefix(start, "OPTIONS") {
			callID, method = "other", "OPTIONS"
		}
		msg := fmt.Sprintf("%s\r\nVia: SIP/2.0/UDP h;branch=z9hG4bK%d\r\nFrom: <sip:a@h>;tag=1\r\nTo: <sip:b@h>\r\nCall-ID: %s\r\nCSeq: 1 %s\r\nContent-Length: 0\r\n\r\n", start, i, callID, method)
		frame := udpFrame(t, []byte(msg))
		at := time.Unix(2000, int64(i)*int64(time.Millisecond))
		if _, err := fs.Append(framestore.Record{Time: at, Link: wire.LinkEthernet, Data: frame, OrigLen: len(frame)}); err != nil {
			t.Fatal(err)
		}
		an.Feed(at, wire.LinkEthernet, frame)
	}
	d := fullDeps(t)
	d.SIP, d.SIPExport = st, ex
	h := newHarness(t, d)
	h.fails("export_capture", map[string]any{}, CodeInvalidArgument)
	h.fails("export_capture", map[string]any{"call_id": "exp-1", "filter": "state == answered"}, CodeInvalidArgument)
	h.fails("export_capture", map[string]any{"call_id": "nope"}, CodeNotFound)
	env := h.ok("export_capture", map[string]any{"call_id": "exp-1"})
	out := data(env)
	if out["frames"] != 3.0 || out["messages"] != 3.0 || out["dialogs_matched"] != 1.0 {
		t.Fatalf("export %v", out)
	}
	if w := env["warnings"].([]any); len(w) != 0 {
		t.Errorf("a whole dialog without media: warnings %v", w)
	}
	if filtered := data(h.ok("export_capture", map[string]any{"filter": "first_method == OPTIONS or state == answered", "max_dialogs": 1})); filtered["dialogs"] != 1.0 || filtered["dialogs_matched"] != 2.0 {
		t.Errorf("filtered export %v", filtered)
	}
	path := out["path"].(string)
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o640 {
		t.Errorf("file mode %v", st.Mode())
	}
	if _, err := exec.LookPath("tshark"); err != nil {
		t.Skip("tshark is not installed: the file was written but not opened")
	}
	res, err := exec.Command("tshark", "-r", path, "-Y", "sip", "-T", "fields", "-e", "sip.Call-ID").Output()
	if err != nil {
		t.Fatalf("tshark: %v\n%s", err, res)
	}
	if got := strings.Fields(string(res)); len(got) != 3 || got[0] != "exp-1" || got[2] != "exp-1" {
		t.Errorf("tshark read %q", res)
	}
}

// udpFrame wraps payload in Ethernet/IPv4/UDP 192.0.2.1:5060 → 192.0.2.2:5060.
func udpFrame(t testing.TB, payload []byte) []byte {
	return ethUDP(t, netip.MustParseAddrPort("192.0.2.1:5060"), netip.MustParseAddrPort("192.0.2.2:5060"), payload)
}

// ethUDP wraps payload in Ethernet/IPv4/UDP from src to dst (IPv4).
func ethUDP(t testing.TB, src, dst netip.AddrPort, payload []byte) []byte {
	t.Helper()
	if !src.Addr().Is4() || !dst.Addr().Is4() {
		t.Fatalf("ethUDP writes IPv4 only: %v → %v", src, dst)
	}
	ipLen := 20 + 8 + len(payload)
	f := make([]byte, 14+ipLen)
	copy(f[0:6], []byte{2, 0, 0, 0, 0, 2})
	copy(f[6:12], []byte{2, 0, 0, 0, 0, 1})
	f[12], f[13] = 0x08, 0x00
	ip := f[14:]
	ip[0], ip[2], ip[3], ip[8], ip[9] = 0x45, byte(ipLen>>8), byte(ipLen), 64, 17
	s4, d4 := src.Addr().As4(), dst.Addr().As4()
	copy(ip[12:16], s4[:])
	copy(ip[16:20], d4[:])
	var sum uint32
	for i := 0; i < 20; i += 2 {
		sum += uint32(ip[i])<<8 | uint32(ip[i+1])
	}
	for sum > 0xffff {
		sum = sum&0xffff + sum>>16
	}
	ip[10], ip[11] = byte(^sum>>8), byte(^sum)
	udp := ip[20:]
	binary.BigEndian.PutUint16(udp[0:], src.Port())
	binary.BigEndian.PutUint16(udp[2:], dst.Port())
	binary.BigEndian.PutUint16(udp[4:], uint16(8+len(payload)))
	copy(udp[8:], payload)
	return f
}

// TestWideFoldsAreAll holds search_messages' byte search to Unicode's
// case folding: the characters outside ASCII that fold onto an ASCII one
// are the two the search leaves to the regexp.
func TestWideFoldsAreAll(t *testing.T) {
	var wide [][]byte
	for c := rune(0); c < utf8.RuneSelf; c++ {
		for f := unicode.SimpleFold(c); f != c; f = unicode.SimpleFold(f) {
			if f >= utf8.RuneSelf && !slices.ContainsFunc(wide, func(w []byte) bool { return string(w) == string(f) }) {
				wide = append(wide, []byte(string(f)))
			}
		}
	}
	if !reflect.DeepEqual(wide, wideFolds[:]) {
		t.Errorf("characters folding onto ASCII: %q, the search leaves %q to the regexp", wide, wideFolds)
	}
}

// FuzzSearchMatcher: whatever bytes a captured message holds and whatever
// the query, search_messages finds the lines the regexp alone finds, run
// on every line with SDES keys masked (its plain-text byte search and
// its skipping of masking change no answer); the hits stay within their
// bounds, in line order, and name a part that exists.
func FuzzSearchMatcher(f *testing.F) {
	invite := "INVITE sip:b@h SIP/2.0\r\nUser-Agent: x\r\n folded\r\n\r\nv=0\r\nm=audio 0 RTP/AVP 0\r\n"
	f.Add([]byte(invite), "a", false, false)
	f.Add([]byte(invite), "invite SIP", false, false)
	f.Add([]byte(invite), "RTP/AVP 0", false, true)
	f.Add([]byte("\n\n\n:\r\n\t\r\n\r\n"), "^", true, false)
	f.Add([]byte("SIP/2.0 200 OK"), "(?m)$", true, false)
	f.Add([]byte("SIP/2.0 200 OK\r\nX: \u212aey \u017fip\r\n"), "key sip", false, false)
	f.Add([]byte("SIP/2.0 200 OK\r\n\r\na=crypto:1 AES_CM_128_HMAC_SHA1_80 INLINE:c2VjcmV0a2V5c2VjcmV0a2V5c2VjcmV0|2^20\r\n"), "secret", false, false)
	f.Add([]byte("SIP/2.0 200 OK\r\n\r\na=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:c2VjcmV0\r\n"), "redacted", false, false)
	f.Add([]byte("A: b\r\r\nC: d\r\n"), "b\r", false, true)
	f.Add([]byte("X: "+strings.Repeat("Bb", 80)+"bA\r\n"), "bba", false, false) // past contains' near misses
	f.Add([]byte(invite), "invite s.p:", true, false)                           // a literal prefix, in another case
	f.Add([]byte(invite), "^User-Agent: [a-z]", true, true)
	f.Add([]byte("SIP/2.0 200 OK\r\nX: \u212aey \u017fip\r\n"), "key .ip", true, false)
	f.Add([]byte("SIP/2.0 200 OK\r\n\r\na=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:c2VjcmV0\r\n"), "inline:RED.*", true, false)
	f.Fuzz(func(t *testing.T, raw []byte, query string, regex, caseSensitive bool) {
		mt, err := searchIn{Query: queryArg(query), Regex: regex, CaseSensitive: caseSensitive}.compile()
		if err != nil {
			return
		}
		_, want, wantMore := lineHits(raw, true, mt.re.Match, true)
		ok, hits, more := mt.scan(raw, true)
		if ok != (len(want) > 0) || len(hits) != len(want) || len(want) > 0 && !reflect.DeepEqual(hits, want) || more != wantMore {
			t.Fatalf("query %q (regex %v, case %v) on %q: got %v %+v %d, the regexp on every line %+v %d", query, regex, caseSensitive, raw, ok, hits, more, want, wantMore)
		}
		if found, _, _ := mt.scan(raw, false); found != ok {
			t.Fatalf("query %q on %q: matched %v counting, %v listing", query, raw, found, ok)
		}
		if len(hits) > searchMaxHits || more < 0 || more > 0 && len(hits) != searchMaxHits {
			t.Fatalf("%d hits and %d more", len(hits), more)
		}
		last := -1
		for _, h := range hits {
			if len(h.Text) > searchHitBytes || h.Line <= last || h.Line == 0 && h.Part != "start_line" || h.Header != "" && h.Part != "header" {
				t.Fatalf("hit %+v after line %d", h, last)
			}
			last = h.Line
		}
	})
}

// sipMoreCase is a call and what its answer must hold: an error code,
// or what check finds.
type sipMoreCase struct {
	name  string
	tool  string
	args  map[string]any
	code  string
	check func(t *testing.T, env map[string]any)
}

// timelineWidth is a case of timeline without bucket_seconds: the width it
// picks over args' span, and how many buckets that makes.
func timelineWidth(span string, args map[string]any, width float64, buckets int) sipMoreCase {
	if args == nil {
		args = map[string]any{}
	}
	return sipMoreCase{name: "timeline without bucket_seconds, " + span, tool: "timeline", args: args,
		check: func(t *testing.T, env map[string]any) {
			d := data(env)
			if d["bucket_seconds"] != width || len(d["buckets"].([]any)) != buckets || d["total_matched"] != 5.0 {
				t.Errorf("bucket_seconds %v, %d buckets, total %v: want %v s, %d buckets, 5 dialogs", d["bucket_seconds"], len(d["buckets"].([]any)), d["total_matched"], width, buckets)
			}
		}}
}
