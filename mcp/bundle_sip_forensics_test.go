package mcp

import (
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"fieldtap/services/rtp"
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
