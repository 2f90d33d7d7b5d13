package mcp

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"fieldtap/services/rtp"
	"fieldtap/services/sip"
	"fieldtap/tools/refdata"
)

// TestReferenceCapturesAnswerTheirSchemas runs every read-only sip and
// media tool on every reference capture (heuristic RTP on and off), and
// every list tool again with each of its columns alone as fields: every
// answer must validate against the tool's advertised output schema.
func TestReferenceCapturesAnswerTheirSchemas(t *testing.T) {
	dir := refdata.Dir(t, "sip")
	files, err := filepath.Glob(filepath.Join(dir, "*.pcap*"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no captures in %s: %v", dir, err)
	}
	for _, file := range files {
		for _, heuristic := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/heuristic=%v", filepath.Base(file), heuristic), func(t *testing.T) {
				h := newHarness(t, captureDeps(t, file, rtp.Options{Heuristic: heuristic}))
				answerEveryTool(t, h)
			})
		}
	}
}

// answerEveryTool calls each read-only tool with arguments taken from the
// store (the first and the last Call-ID, the first stream), and each list
// tool with fields; the harness validates every answer.
func answerEveryTool(t *testing.T, h *harness) {
	t.Helper()
	dialogs := items(h.ok("list_dialogs", map[string]any{"limit": MaxLimit}))
	var callIDs []string
	if n := len(dialogs); n > 0 {
		callIDs = []string{dialogs[0]["call_id"].(string), dialogs[n-1]["call_id"].(string)}
	}
	streams := items(h.ok("rtp_streams", nil))
	calls := []struct {
		tool string
		args map[string]any
	}{
		{"list_dialogs", map[string]any{"filter": "final_code >= 400"}},
		{"validate_filter", map[string]any{"filter": "state =="}},
		{"find_problems", nil},
		{"get_capture_report", nil},
		{"search_messages", map[string]any{"query": "sip:"}},
		{"search_messages", map[string]any{"query": "^m=audio", "regex": true}},
		{"timeline", map[string]any{"bucket_seconds": 1}},
		{"tail_dialogs", nil},
		{"await_condition", map[string]any{"filter": "", "min_count": max(len(dialogs), 1), "timeout_seconds": 1}}, // met at once unless the store is empty
		{"rtp_streams", map[string]any{"orphaned": true}},
		{"media_diagnostics", nil},
		{"dtmf_events", nil},
		{"search_by_time", map[string]any{"limit": 5}},
		{"top_talkers", nil},
		{"sip_security_findings", nil},
		{"compare_captures", map[string]any{"min_population": 1}},
	}
	for _, dim := range sip.Dimensions {
		calls = append(calls, struct {
			tool string
			args map[string]any
		}{"aggregate_dialogs", map[string]any{"dimension": dim}}, struct {
			tool string
			args map[string]any
		}{"group_dialogs", map[string]any{"dimension": dim, "max_groups": 2}})
	}
	for _, id := range callIDs {
		for _, tool := range []string{"get_dialog", "triage_call", "render_ladder", "check_codec_negotiation", "media_diagnostics", "generate_wireshark_filter", "find_correlated", "get_call_tree", "lint_dialog"} {
			calls = append(calls, struct {
				tool string
				args map[string]any
			}{tool, map[string]any{"call_id": id}})
		}
		calls = append(calls, struct {
			tool string
			args map[string]any
		}{"get_message", map[string]any{"call_id": id, "index": 0}})
		if _, r := h.call("rtp_stats", map[string]any{"call_id": id}); r.IsError && !strings.Contains(r.Content[0].Text, CodeNotFound) {
			t.Errorf("rtp_stats %s: %s", id, r.Content[0].Text)
		}
	}
	if len(streams) > 0 {
		calls = append(calls, struct {
			tool string
			args map[string]any
		}{"rtp_stats", map[string]any{"stream_id": streams[0]["stream_id"]}})
	}
	for _, c := range calls {
		if _, r := h.call(c.tool, c.args); r.IsError {
			t.Errorf("%s %v: %s", c.tool, c.args, r.Content[0].Text)
		}
	}
	for tool, isList := range h.list {
		if !isList {
			continue
		}
		args := map[string]any{}
		if tool == "search_messages" {
			args["query"] = "sip:"
		}
		for _, col := range columnsOf(t, h, tool) {
			args["fields"] = []any{col}
			if _, r := h.call(tool, args); r.IsError {
				t.Errorf("%s fields [%s]: %s", tool, col, r.Content[0].Text)
			}
		}
	}
}

// columnsOf reads a list tool's columns from its fields enum.
func columnsOf(t *testing.T, h *harness, tool string) []string {
	t.Helper()
	for _, lt := range listTools(t, h.s) {
		if lt.Name != tool {
			continue
		}
		var in struct {
			Properties struct {
				Fields struct {
					Items struct {
						Enum []string `json:"enum"`
					} `json:"items"`
				} `json:"fields"`
			} `json:"properties"`
		}
		if err := json.Unmarshal(lt.InputSchema, &in); err != nil {
			t.Fatal(err)
		}
		return in.Properties.Fields.Items.Enum
	}
	t.Fatalf("no tool %s", tool)
	return nil
}

// branch-scenario-sipp.pcapng opens each of its 1,334 Call-IDs with a
// REGISTER → 200 and then sends an INVITE on it. tshark 4.0.17 counts
// 1,148 INVITE transactions answered 403 (`tshark -r F -Y
// 'sip.CSeq.method == "INVITE" && sip.Status-Code == 403'`, one per
// Call-ID, CSeq and branch); the first version judged each dialog by its
// REGISTER and found no problem at all.
func TestFindProblemsJudgesEachInvite(t *testing.T) {
	file := filepath.Join(refdata.Dir(t, "sip"), "branch-scenario-sipp.pcapng")
	h := newHarness(t, captureDeps(t, file, rtp.Options{}))
	env := h.ok("find_problems", map[string]any{"problems": []any{"failed"}, "limit": 1})
	if pg := env["page"].(map[string]any); pg["total_matched"] != 1148.0 {
		t.Errorf("find_problems failed: total_matched %v, want 1148", pg["total_matched"])
	}
	row := items(env)[0]
	at := row["attempts"].([]any)
	if len(at) != 1 || at[0].(map[string]any)["final_code"] != 403.0 || row["first_method"] != "REGISTER" {
		t.Errorf("row %v: want its one INVITE attempt, refused with 403", row)
	}
	tr := data(h.ok("triage_call", map[string]any{"call_id": "1-4461@127.0.1.1"}))
	if tr["outcome"] != "failed" || tr["final_code"] != 403.0 || tr["status_text"] != "Forbidden" || len(tr["attempts"].([]any)) != 1 {
		t.Errorf("triage %v: want failed with 403, one attempt", tr)
	}
	g := data(h.ok("group_dialogs", map[string]any{"dimension": "method"}))["overall"].(map[string]any)
	// 1,250 INVITEs with a final response (1,148 × 403, 102 × 200).
	if g["attempts"] != 1250.0 || g["answered"] != 102.0 {
		t.Errorf("group_dialogs overall %v: want 1250 attempts, 102 answered", g)
	}
}
