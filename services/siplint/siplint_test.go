package siplint

import (
	"path/filepath"
	"testing"

	"fieldtap/drivers/pcapfile"
	"fieldtap/services/netdecode"
	"fieldtap/services/sip"
	"fieldtap/tools/refdata"
)

func load(t *testing.T, file string) *sip.Snapshot {
	t.Helper()
	st, _ := sip.New(sip.Limits{})
	a := sip.NewAnalyser(st, netdecode.Options{})
	refdata.EachRecord(t, filepath.Join(refdata.Dir(t, "sip"), file), func(rec pcapfile.Record) { a.Feed(rec.Time, rec.Link, rec.Data) })
	return st.Snapshot()
}

func violations(sn *sip.Snapshot) map[string]int {
	dialogs := map[string]int{} // rule → dialogs breaking it
	for _, d := range sn.Dialogs {
		seen := map[string]bool{}
		for _, v := range Lint(sn, d).Violations {
			if !seen[v.Rule.ID] {
				seen[v.Rule.ID] = true
				dialogs[v.Rule.ID]++
			}
		}
	}
	return dialogs
}

// DTMFsipinfo.pcap, as tshark 4.0.17 times it: the CANCELs of INVITE
// CSeq 2 (0.132 s) and 3 (0.134 s) leave before their 100 Trying (0.147 s
// and 0.222 s); every INVITE's 200 is ACKed.
func TestLintCancelBeforeProvisional(t *testing.T) {
	sn := load(t, "DTMFsipinfo.pcap")
	r := Lint(sn, sn.Dialogs[0])
	var got []uint32
	for _, v := range r.Violations {
		if v.Rule.ID != "cancel_without_provisional" {
			t.Errorf("unexpected %s: %s", v.Rule.ID, v.Detail)
		}
		got = append(got, v.CSeq)
	}
	if len(got) != 2 || got[0] != 2 || got[1] != 3 {
		t.Errorf("violations at CSeq %v, want 2 and 3", got)
	}
	if len(r.Evaluated) != 4 || len(r.NotEvaluated) != 1 || r.NotEvaluated[0].Rule.ID != "rtp_on_unannounced_port" {
		t.Errorf("evaluated %v, not evaluated %+v", r.Evaluated, r.NotEvaluated)
	}
}

// branch-scenario-sipp.pcapng: SIPp never ACKs its 403s; tshark 4.0.17
// lists 1,149 Call-IDs whose INVITE has a final response and no ACK
// (the 1,148 refused and one answered).
func TestLintMissingACK(t *testing.T) {
	if got := violations(load(t, "branch-scenario-sipp.pcapng")); got["missing_ack"] != 1149 || len(got) != 1 {
		t.Errorf("dialogs per rule %v, want missing_ack on 1149 and nothing else", got)
	}
}

// Two re-INVITEs crossing, the loser answered 491; and an ACK carrying
// SDP after the INVITE made the offer.
func TestLintGlareAndSDP(t *testing.T) {
	st, _ := sip.New(sip.Limits{})
	for i, raw := range []string{
		msgAt("INVITE sip:b@h SIP/2.0", "1", "INVITE", "", true),
		msgAt("SIP/2.0 200 OK", "1", "INVITE", "", true),
		msgAt("ACK sip:b@h SIP/2.0", "1", "ACK", "tag=9", true),
		msgAt("INVITE sip:b@h SIP/2.0", "2", "INVITE", "tag=9", false),
		msgAt("SIP/2.0 491 Request Pending", "2", "INVITE", "tag=9", false),
		msgAt("ACK sip:b@h SIP/2.0", "2", "ACK", "tag=9", false),
	} {
		add(t, st, i, raw)
	}
	sn := st.Snapshot()
	got := map[string]uint32{}
	for _, v := range Lint(sn, sn.Dialogs[0]).Violations {
		got[v.Rule.ID] = v.CSeq
	}
	if len(got) != 2 || got["reinvite_glare"] != 2 || got["sdp_answer_without_offer"] != 1 {
		t.Errorf("violations %v, want reinvite_glare at CSeq 2 and sdp_answer_without_offer at 1", got)
	}
}
