package mcp

import (
	"fmt"
	"maps"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"fieldtap/services/rtp"
	"fieldtap/services/sip"
	"fieldtap/services/sipsecurity"
	"fieldtap/tools/refdata"
)

// The filter generate_wireshark_filter gives for sip-rtp-g711.pcap's call
// 1-1966@10.0.2.20 matches, in tshark 4.0.17, its 6 SIP messages and the
// 425 packets of its PCMU stream (PROVENANCE.md): 431 frames.
func TestWiresharkFilterMatchesTheCall(t *testing.T) {
	path := filepath.Join(refdata.Dir(t, "sip"), "sip-rtp-g711.pcap")
	if _, err := exec.LookPath("tshark"); err != nil {
		t.Skip("tshark is not installed (apt-get install tshark)")
	}
	h := newHarness(t, captureDeps(t, path, rtp.Options{}))
	d := data(h.ok("generate_wireshark_filter", map[string]any{"call_id": "1-1966@10.0.2.20"}))
	if d["media_flows"] != 1.0 || d["sip"] != `sip.Call-ID == "1-1966@10.0.2.20"` {
		t.Errorf("answer %v: want the SIP term and one media flow", d)
	}
	out, err := exec.Command("tshark", "-r", path, "-Y", d["filter"].(string), "-T", "fields", "-e", "frame.number").Output()
	if err != nil {
		t.Fatalf("tshark refused %s: %v", d["filter"], err)
	}
	if n := strings.Count(string(out), "\n"); n != 431 {
		t.Errorf("%s matched %d frames, want 431", d["filter"], n)
	}
	if d := data(h.ok("generate_wireshark_filter", map[string]any{"call_id": "1-1966@10.0.2.20", "no_media": true})); d["media"] != "" || d["filter"] != d["sip"] {
		t.Errorf("no_media: %v", d)
	}
	h.fails("generate_wireshark_filter", map[string]any{"call_id": "nope"}, CodeNotFound)
	h.fails("generate_wireshark_filter", map[string]any{}, CodeInvalidArgument)
}

// search_by_time pages the five calls' 15 messages (sipTestDeps: one
// every 10 ms from t=1000 s, plus 1 and 2 ms) in time order, and a window
// keeps only its own.
func TestSearchByTimePages(t *testing.T) {
	h := newHarness(t, sipTestDeps(t))
	var got []time.Time
	cursor := ""
	for range 10 {
		args := map[string]any{"limit": 4}
		if cursor != "" {
			args["cursor"] = cursor
		}
		env := h.ok("search_by_time", args)
		for _, r := range items(env) {
			at, err := time.Parse(time.RFC3339Nano, r["time"].(string))
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, at)
		}
		if pg := env["page"].(map[string]any); pg["total_matched"] != 15.0 {
			t.Fatalf("total_matched %v, want 15", pg["total_matched"])
		}
		if cursor, _ = env["page"].(map[string]any)["next_cursor"].(string); cursor == "" {
			break
		}
	}
	if len(got) != 15 || !slices.IsSortedFunc(got, time.Time.Compare) {
		t.Errorf("times %v: want 15 in order", got)
	}
	env := h.ok("search_by_time", map[string]any{"since": "1970-01-01T00:16:40.010Z", "until": "1970-01-01T00:16:40.020Z"})
	rows := items(env)
	if len(rows) != 3 || rows[0]["call_id"] != "call-1" || rows[2]["status_code"] != 486.0 {
		t.Errorf("window rows %v: want call-1's three messages", rows)
	}
	if rows := items(h.ok("search_by_time", map[string]any{"filter": "final_code == 486"})); len(rows) != 6 {
		t.Errorf("filter: %d rows, want the 6 messages of the two busy calls", len(rows))
	}
	h.fails("search_by_time", map[string]any{"since": "1970-01-01T00:16:42Z", "until": "1970-01-01T00:16:38Z"}, CodeInvalidArgument)
}

// search_by_time lists the messages of kept dialogs only: an evicted
// dialog's messages may still be in the message ring, and count neither
// with a filter nor without one (which reads no dialog: HoldsDialog).
func TestSearchByTimeSkipsEvictedDialogs(t *testing.T) {
	st, err := sip.New(sip.Limits{Dialogs: 3})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		for j, start := range []string{"INVITE sip:2002@h SIP/2.0", "SIP/2.0 180 Ringing", "SIP/2.0 200 OK"} {
			addSIP(t, st, i*10+j, fmt.Sprintf("%s\r\nVia: SIP/2.0/UDP h;branch=z9hG4bK%d\r\nFrom: <sip:1001@h>;tag=1\r\nTo: <sip:2002@h>;tag=2\r\nCall-ID: call-%d\r\nCSeq: 1 INVITE\r\nContent-Length: 0\r\n\r\n", start, i, i))
		}
	}
	if ds := st.Snapshot().Dialogs; len(ds) != 3 || ds[0].CallID != "call-2" {
		t.Fatalf("kept dialogs %d, want calls 2 to 4", len(ds))
	}
	d := fullDeps(t)
	d.SIP = st
	h := newHarness(t, d)
	for _, args := range []map[string]any{{}, {"filter": "final_code == 200"}} {
		env := h.ok("search_by_time", args)
		if n := env["page"].(map[string]any)["total_matched"]; n != 9.0 {
			t.Errorf("%v: total_matched %v, want the 9 messages of calls 2 to 4", args, n)
		}
		if r := items(env)[0]; r["call_id"] != "call-2" {
			t.Errorf("%v: first row %v, want call-2's INVITE", args, r)
		}
	}
}

// SIP_CALL_RTP_G711.pcap, as tshark 4.0.17 lists its 14 SIP messages
// (`-T fields -e ip.src -e ip.dst -e sip.Call-ID -e sip.Method -e
// sip.Status-Code -e sip.from.user -e sip.to.user`): two INVITEs
// 200.57.7.195 → .204 to francisco (one answered 200, one ringing at the
// end), francisco's REGISTER from .204 (200), and Ivan's two REGISTERs
// from .205 on one Call-ID (200 each), all to .195.
func TestDescribeEndpointAndTopTalkers(t *testing.T) {
	h := newHarness(t, captureDeps(t, filepath.Join(refdata.Dir(t, "sip"), "SIP_CALL_RTP_G711.pcap"), rtp.Options{}))
	counts := func(v any) map[string]float64 {
		out := map[string]float64{}
		for _, r := range v.([]any) {
			out[r.(map[string]any)["value"].(string)] = r.(map[string]any)["count"].(float64)
		}
		return out
	}
	tests := []struct {
		name                        string
		args                        map[string]any
		dialogs, caller, callee     float64
		registrations               float64
		regResults, outcomes, peers map[string]float64
	}{
		{name: "ivan's phone", args: map[string]any{"ip": "200.57.7.205"}, dialogs: 1, caller: 1, callee: 0, registrations: 2,
			regResults: map[string]float64{"200": 2}, outcomes: map[string]float64{}, peers: map[string]float64{"200.57.7.195": 1}},
		{name: "francisco's phone", args: map[string]any{"ip": "200.57.7.204"}, dialogs: 3, caller: 1, callee: 2, registrations: 1,
			regResults: map[string]float64{"200": 1}, outcomes: map[string]float64{"answered": 1, "in_progress": 1}, peers: map[string]float64{"200.57.7.195": 3}},
		{name: "the proxy", args: map[string]any{"ip": "200.57.7.195"}, dialogs: 4, caller: 2, callee: 2, registrations: 0,
			regResults: map[string]float64{}, outcomes: map[string]float64{"answered": 1, "in_progress": 1},
			peers: map[string]float64{"200.57.7.204": 3, "200.57.7.205": 1}},
		{name: "francisco", args: map[string]any{"user": "francisco"}, dialogs: 3, caller: 1, callee: 3, registrations: 1,
			regResults: map[string]float64{"200": 1}, outcomes: map[string]float64{"answered": 1, "in_progress": 1}, peers: map[string]float64{"200.57.7.195": 3, "200.57.7.204": 3}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := data(h.ok("describe_endpoint", tc.args))
			if d["dialogs"] != tc.dialogs || d["as_caller"] != tc.caller || d["as_callee"] != tc.callee || d["registrations"] != tc.registrations {
				t.Errorf("dialogs %v caller %v callee %v registrations %v, want %v %v %v %v", d["dialogs"], d["as_caller"], d["as_callee"], d["registrations"],
					tc.dialogs, tc.caller, tc.callee, tc.registrations)
			}
			// Attempts' final codes follow their outcomes here: answered
			// with a 200, the other still ringing.
			codes := map[string]float64{}
			if len(tc.outcomes) > 0 {
				codes = map[string]float64{"200": 1, sip.NoValue: 1}
			}
			for key, want := range map[string]map[string]float64{"registration_results": tc.regResults, "attempt_outcomes": tc.outcomes, "attempt_final_codes": codes, "peers": tc.peers} {
				if got := counts(d[key]); !maps.Equal(got, want) {
					t.Errorf("%s %v, want %v", key, got, want)
				}
			}
		})
	}
	h.fails("describe_endpoint", map[string]any{}, CodeInvalidArgument)
	h.fails("describe_endpoint", map[string]any{"ip": "200.57.7.204", "user": "francisco"}, CodeInvalidArgument)
	h.fails("describe_endpoint", map[string]any{"ip": "not-an-ip"}, CodeInvalidArgument)

	d := data(h.ok("top_talkers", nil))
	want := map[string]float64{"200.57.7.195": 4, "200.57.7.204": 3, "200.57.7.205": 1}
	got, sum := map[string]float64{}, 0.0
	for _, r := range d["talkers"].([]any) {
		r := r.(map[string]any)
		got[r["value"].(string)] = r["dialogs"].(float64)
		sum += r["share"].(float64)
	}
	if !maps.Equal(got, want) || d["total_dialogs"] != 4.0 || sum != 2.0 {
		t.Errorf("top_talkers %v (shares sum %v), want %v over 4 dialogs, shares summing to 2", got, sum, want)
	}
	ag := data(h.ok("aggregate_dialogs", map[string]any{"dimension": "participant_user"}))
	if ag["multi_valued"] != true || ag["total_matched"] != 4.0 {
		t.Errorf("aggregate by participant_user %v", ag)
	}
}

// Two legs through a B2BUA sharing a Session-ID (RFC 7989 §6: the
// B2BUA passes the caller's UUID on), a third naming the second's
// Call-ID in an X- header, and a fourth only started 500 ms after the
// first to the same callee: the heuristic, labelled, never expanded.
func TestCallTreeAcrossABackToBackUA(t *testing.T) {
	st, _ := sip.New(sip.Limits{})
	leg := func(at int, callID, from, to string, extra string) {
		raw := fmt.Sprintf("INVITE sip:%s@h SIP/2.0\r\nVia: SIP/2.0/UDP h;branch=z9hG4bK%s\r\nFrom: <sip:%s@h>;tag=1\r\nTo: <sip:%s@h>\r\nCall-ID: %s\r\nCSeq: 1 INVITE\r\n%sContent-Length: 0\r\n\r\n",
			to, callID, from, to, callID, extra)
		addSIP(t, st, at, raw)
	}
	const uuid = "ab30317f1a784dc48ff824d0d3715d86"
	leg(0, "in-leg", "alice", "pbx", "Session-ID: "+uuid+";remote=00000000000000000000000000000000\r\n")
	leg(100, "out-leg", "pbx", "bob", "Session-ID: "+strings.ToUpper(uuid)+"\r\n")
	leg(20000, "transfer", "pbx", "carol", "X-Orig-Call-ID: out-leg\r\n")
	leg(500, "near", "dave", "pbx", "")
	d := testDeps()
	d.SIP = st
	h := newHarness(t, d)

	cr := data(h.ok("find_correlated", map[string]any{"call_id": "in-leg"}))["correlated"].([]any)
	if len(cr) != 2 {
		t.Fatalf("correlated %v: want out-leg and near", cr)
	}
	ev := cr[0].(map[string]any)["evidence"].([]any)[0].(map[string]any)
	if cr[0].(map[string]any)["call_id"] != "out-leg" || ev["by"] != "session_id" || ev["uuid"] != uuid || ev["heuristic"] != false {
		t.Errorf("first correlated %v", cr[0])
	}
	if ev := cr[1].(map[string]any)["evidence"].([]any)[0].(map[string]any); ev["by"] != "timing_heuristic" || ev["heuristic"] != true {
		t.Errorf("near leg evidence %v: want the heuristic, labelled", ev)
	}
	legs := data(h.ok("get_call_tree", map[string]any{"call_id": "in-leg"}))["legs"].([]any)
	got := map[string]any{}
	for _, l := range legs {
		l := l.(map[string]any)
		got[l["call_id"].(string)] = l["depth"]
	}
	if want := map[string]any{"in-leg": 0.0, "out-leg": 1.0, "near": 1.0, "transfer": 2.0}; !maps.Equal(got, want) {
		t.Errorf("tree depths %v, want %v", got, want)
	}
	h.fails("get_call_tree", map[string]any{"call_id": "nope"}, CodeNotFound)
	h.fails("find_correlated", map[string]any{"call_id": "nope"}, CodeNotFound)
	h.fails("find_correlated", map[string]any{}, CodeInvalidArgument)
}

// branch-scenario-sipp.pcapng: a SIPp load run from 127.0.0.1 over 133 s,
// 1,334 REGISTER and 1,334 INVITE transactions, at most 601 of each in any
// 60 s window, 1,148 INVITEs answered 403 (tshark 4.0.17, by Via branch,
// frame time and sip.Status-Code). Each flood is one episode of the whole
// capture; the configured thresholds decide what is one.
func TestSecurityFindingsOnTheSIPpCapture(t *testing.T) {
	d := captureDeps(t, filepath.Join(refdata.Dir(t, "sip"), "branch-scenario-sipp.pcapng"), rtp.Options{})
	kinds := func(h *harness) map[string]any {
		out := map[string]any{}
		for _, f := range data(h.ok("sip_security_findings", nil))["findings"].([]any) {
			f := f.(map[string]any)
			peak := f["peak"].(map[string]any)
			out[f["kind"].(string)] = fmt.Sprintf("%v %v %.2f", f["total"], f["answered_4xx"], f["answered_4xx_pct"])
			if f["source"] != "127.0.0.1" || len(f["evidence"].([]any)) != 10 || f["more_evidence"] != 1324.0 || peak["count"] != 601.0 || peak["window_seconds"] != 60.0 {
				t.Errorf("finding %v: want 127.0.0.1 with 10 evidence rows and 1324 more, a peak of 601 in 60 s", f)
			}
			if f["kind"] == "invite_flood" && (f["first"] != "2016-11-17T21:52:35.303579687Z" || f["last"] != "2016-11-17T21:54:48.601474824Z" ||
				f["id"] != "invite_flood/127.0.0.1/2016-11-17T21:52:35.303579687Z") {
				t.Errorf("invite flood %v to %v, id %v", f["first"], f["last"], f["id"])
			}
		}
		return out
	}
	if got, want := kinds(newHarness(t, d)), map[string]any{"register_flood": "1334 0 0.00", "invite_flood": "1334 1148 86.06"}; !maps.Equal(got, want) {
		t.Errorf("findings %v, want %v", got, want)
	}
	d.SIPSecurity = sipsecurity.Defaults
	d.SIPSecurity.Registers = 602
	if got, want := kinds(newHarness(t, d)), map[string]any{"invite_flood": "1334 1148 86.06"}; !maps.Equal(got, want) {
		t.Errorf("with registers = 602: findings %v, want %v", got, want)
	}
}

// DTMFsipinfo.pcap: both CANCELs (CSeq 2 and 3) leave before their
// INVITE's 100 Trying, as tshark 4.0.17's frame times show.
func TestLintDialogOnDTMFsipinfo(t *testing.T) {
	h := newHarness(t, captureDeps(t, filepath.Join(refdata.Dir(t, "sip"), "DTMFsipinfo.pcap"), rtp.Options{}))
	id := items(h.ok("list_dialogs", nil))[0]["call_id"]
	d := data(h.ok("lint_dialog", map[string]any{"call_id": id}))
	vs := d["violations"].([]any)
	if len(vs) != 2 {
		t.Fatalf("violations %v, want the two early CANCELs", vs)
	}
	rule := vs[0].(map[string]any)["rule"].(map[string]any)
	if rule["id"] != "cancel_without_provisional" || rule["rfc"] != "RFC 3261" || rule["section"] != "9.1" || vs[1].(map[string]any)["cseq"] != 3.0 {
		t.Errorf("violations %v", vs)
	}
	// The media analyser saw the SDP and no RTP: every rule is evaluated.
	if ne, ev := d["rules_not_evaluated"].([]any), d["rules_evaluated"].([]any); len(ne) != 0 || len(ev) != 5 {
		t.Errorf("rules_not_evaluated %v, rules_evaluated %v", ne, ev)
	}
	h.fails("lint_dialog", map[string]any{"call_id": "nope"}, CodeNotFound)
}

// SIP_CALL_RTP_G711.pcap with heuristic RTP: the relay's legs to
// 200.57.7.199:4800 and back to 200.57.7.196:40378 (891 and 548 packets
// in tshark 4.0.17) use ports no SDP of the answered call announced.
func TestLintDialogRTPOnUnannouncedPort(t *testing.T) {
	h := newHarness(t, captureDeps(t, filepath.Join(refdata.Dir(t, "sip"), "SIP_CALL_RTP_G711.pcap"), rtp.Options{Heuristic: true}))
	d := data(h.ok("lint_dialog", map[string]any{"call_id": "12013223@200.57.7.195"}))
	vs := d["violations"].([]any)
	if len(vs) != 2 {
		t.Fatalf("violations %v, want the relay's two legs", vs)
	}
	for _, v := range vs {
		rule := v.(map[string]any)["rule"].(map[string]any)
		if rule["id"] != "rtp_on_unannounced_port" || rule["rfc"] != "RFC 3264" || rule["section"] != "5.1, 6.1" || rule["severity"] != "warning" {
			t.Errorf("violation %v", v)
		}
	}
}
