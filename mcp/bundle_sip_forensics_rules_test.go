package mcp

import (
	"path/filepath"
	"strings"
	"testing"

	"fieldtap/mcp/untrusted"
	"fieldtap/services/rtp"
	"fieldtap/services/siplint"
	"fieldtap/tools/refdata"
)

// validate_message over every message of SIP_CALL_RTP_G711.pcap: tshark
// 4.0.17 lists 3 requests without Max-Forwards and 3 responses above 100
// without a To tag; each finding's evidence is fenced sender text.
func TestValidateMessageOnReference(t *testing.T) {
	h := newHarness(t, captureDeps(t, filepath.Join(refdata.Dir(t, "sip"), "SIP_CALL_RTP_G711.pcap"), rtp.Options{}))
	got := map[string]int{}
	messages := 0
	for _, row := range items(h.ok("list_dialogs", nil)) {
		for i := 0; ; i++ {
			env, r := h.call("validate_message", map[string]any{"call_id": row["call_id"], "index": i})
			if r.IsError {
				if code, _, _ := firstError(t, env); code != CodeNotFound {
					t.Fatalf("%s #%d: %s", row["call_id"], i, code)
				}
				break
			}
			messages++
			d := data(env)
			for _, f := range d["findings"].([]any) {
				f := f.(map[string]any)
				id := f["rule"].(map[string]any)["id"].(string)
				got[id]++
				if ev, ok := f["evidence"].(string); id == "to_tag_missing" && (!ok || !strings.HasPrefix(ev, untrusted.Open) || !strings.HasSuffix(ev, untrusted.Close)) {
					t.Errorf("%s: evidence %v is not fenced", id, f["evidence"])
				}
			}
			if n := len(d["rules_evaluated"].([]any)) + len(d["rules_not_evaluated"].([]any)); n != 11 {
				t.Errorf("%s #%d: %d rules evaluated or not, want 11", row["call_id"], i, n)
			}
		}
	}
	if messages != 14 || got["mandatory_header_missing"] != 3 || got["to_tag_missing"] != 3 || len(got) != 2 {
		t.Errorf("%d messages, findings %v; want 14 and 3 mandatory_header_missing, 3 to_tag_missing", messages, got)
	}
	h.fails("validate_message", map[string]any{"call_id": "nope", "index": 0}, CodeNotFound)
	h.fails("validate_message", map[string]any{"call_id": "12013223@200.57.7.195", "index": 199}, CodeNotFound)
}

// explain_rule answers every rule of the shared table as the table says,
// and names the known ids for an unknown one.
func TestExplainRule(t *testing.T) {
	h := newHarness(t, sipTestDeps(t))
	for _, r := range siplint.Rules {
		d := data(h.ok("explain_rule", map[string]any{"rule": r.ID}))
		if d["rfc"] != r.RFC || d["section"] != r.Section || d["severity"] != string(r.Severity) || d["fix"] != r.Fix || d["checked_by"] != r.Checker {
			t.Errorf("%s: %v", r.ID, d)
		}
	}
	env, r := h.call("explain_rule", map[string]any{"rule": "no_such_rule"})
	code, msg, hint := firstError(t, env)
	if !r.IsError || code != CodeInvalidArgument || !strings.Contains(msg, "no_such_rule") || !strings.Contains(hint, "rtp_on_unannounced_port") || !strings.Contains(hint, "via_branch_cookie") || !strings.Contains(hint, "digest_bruteforce") {
		t.Errorf("unknown rule: %s %q %q", code, msg, hint)
	}
}
