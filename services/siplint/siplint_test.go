package siplint

import (
	"fmt"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fieldtap/drivers/pcapfile"
	"fieldtap/services/netdecode"
	"fieldtap/services/rtp"
	"fieldtap/services/sip"
	"fieldtap/tools/refdata"
)

func load(t *testing.T, file string) *sip.Snapshot {
	sn, _ := loadMedia(t, file, rtp.Options{})
	return sn
}

// loadMedia runs file through the SIP analyser with an RTP analyser on
// its media hook.
func loadMedia(t *testing.T, file string, o rtp.Options) (*sip.Snapshot, *rtp.Snapshot) {
	t.Helper()
	st, _ := sip.New(sip.Limits{})
	a := sip.NewAnalyser(st, netdecode.Options{})
	ra := rtp.NewAnalyser(o)
	a.SetMediaHook(ra)
	refdata.EachRecord(t, filepath.Join(refdata.Dir(t, "sip"), file), func(rec pcapfile.Record) { a.Feed(rec.Time, rec.Link, rec.Data) })
	return st.Snapshot(), ra.Snapshot(false)
}

func violations(sn *sip.Snapshot) map[string]int {
	dialogs := map[string]int{} // rule → dialogs breaking it
	for _, d := range sn.Dialogs {
		seen := map[string]bool{}
		for _, v := range Lint(sn, d, nil).Violations {
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
	r := Lint(sn, sn.Dialogs[0], nil)
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
	for _, v := range Lint(sn, sn.Dialogs[0], nil).Violations {
		got[v.Rule.ID] = v.CSeq
	}
	if len(got) != 2 || got["reinvite_glare"] != 2 || got["sdp_answer_without_offer"] != 1 {
		t.Errorf("violations %v, want reinvite_glare at CSeq 2 and sdp_answer_without_offer at 1", got)
	}
}

// SIP_CALL_RTP_G711.pcap: 200.57.7.196 relays the answered call's media
// to 200.57.7.199:4800 from port 40378, which no SDP announced (tshark
// 4.0.17 finds those two legs only with heuristic RTP: 891 and 548
// packets, the SSRCs of the announced legs). With heuristic RTP the
// answered call breaks rtp_on_unannounced_port twice; without, the
// orphans are not tracked and nothing is found. No other reference
// capture sends RTP to an unannounced port.
func TestLintRTPOnUnannouncedPortReference(t *testing.T) {
	files := []string{"SIP_CALL_RTP_G711.pcap", "RTP-Protocol.pcap", "sip-rtp-g711.pcap", "SIP-Call-Flow-Over-TCP.pcap",
		"gen-sipp-hold-resume-rfc2833-udp.pcapng", "DTMFsipinfo.pcap", "sip-488-Not-Acceptable-Here-codec-null.pcapng", "ipv6frag.pcap"}
	for _, file := range files {
		for _, heuristic := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/heuristic=%v", file, heuristic), func(t *testing.T) {
				sn, media := loadMedia(t, file, rtp.Options{Heuristic: heuristic})
				got := map[string][]string{} // Call-ID → stream ids
				for _, d := range sn.Dialogs {
					for _, v := range Lint(sn, d, media).Violations {
						if v.Rule.ID == "rtp_on_unannounced_port" {
							got[d.CallID] = append(got[d.CallID], v.Detail)
						}
					}
				}
				want := 0
				if file == "SIP_CALL_RTP_G711.pcap" && heuristic {
					want = 2
				}
				n := 0
				for _, vs := range got {
					n += len(vs)
				}
				if n != want {
					t.Fatalf("%d violations %v, want %d", n, got, want)
				}
				if want > 0 {
					vs := got["12013223@200.57.7.195"]
					if len(vs) != 2 || !strings.Contains(vs[0], "200.57.7.199:4800") || !strings.Contains(vs[1], "200.57.7.196:40378") {
						t.Errorf("violations %q, want the relay legs to 200.57.7.199:4800 and back to 200.57.7.196:40378", vs)
					}
				}
			})
		}
	}
}

// A NAT rewrote the callee's port: the call's stream from the announced
// 192.0.2.2:4002 goes to 192.0.2.1:4444 (announced 4000), the other way
// is as announced, an orphan between the same hosts counts, and one
// between other hosts does not.
func TestLintRTPOnUnannouncedPortSynthetic(t *testing.T) {
	st, _ := sip.New(sip.Limits{})
	for i, raw := range []string{
		msgAt("INVITE sip:b@h SIP/2.0", "1", "INVITE", "", true),
		msgAt("SIP/2.0 200 OK", "1", "INVITE", "tag=9", true),
		msgAt("ACK sip:b@h SIP/2.0", "1", "ACK", "tag=9", false),
	} {
		add(t, st, i, raw)
	}
	sn := st.Snapshot()
	d := sn.Dialogs[0]
	at := time.Unix(101, 0)
	stream := func(src, dst string, ssrc uint32, callID string) rtp.StreamView {
		k := rtp.Key{Src: netip.MustParseAddrPort(src), Dst: netip.MustParseAddrPort(dst), SSRC: ssrc}
		return rtp.StreamView{ID: rtp.StreamID(k), Key: k, CallID: callID, First: at, Last: at.Add(time.Second), Packets: 50}
	}
	media := &rtp.Snapshot{
		Dialogs: map[string]*rtp.DialogView{"g": {CallID: "g", Endpoints: []string{"192.0.2.1:4000", "192.0.2.2:4002"}}},
		Streams: []rtp.StreamView{
			stream("192.0.2.1:4000", "192.0.2.2:4002", 1, "g"),
			stream("192.0.2.2:4002", "192.0.2.1:4444", 2, "g"),
			stream("192.0.2.2:5000", "192.0.2.1:5002", 3, ""),
			stream("198.51.100.7:5000", "192.0.2.1:5002", 4, ""),
		},
	}
	r := Lint(sn, d, media)
	var got []string
	for _, v := range r.Violations {
		if v.Rule.ID != "rtp_on_unannounced_port" || v.Rule.RFC != "RFC 3264" {
			t.Errorf("unexpected %+v", v)
		}
		got = append(got, v.Detail)
	}
	if len(got) != 2 || !strings.Contains(got[0], "-> 192.0.2.1:4444") || !strings.Contains(got[1], "-> 192.0.2.1:5002") {
		t.Errorf("violations %q, want the NATed stream to 192.0.2.1:4444 and the orphan to 192.0.2.1:5002", got)
	}
	if len(r.NotEvaluated) != 0 || len(r.Evaluated) != 5 {
		t.Errorf("evaluated %v, not evaluated %+v", r.Evaluated, r.NotEvaluated)
	}
	media.Dialogs["g"].EndpointsDropped = 1
	if r := Lint(sn, d, media); len(r.NotEvaluated) != 1 || r.NotEvaluated[0].Rule.ID != "rtp_on_unannounced_port" {
		t.Errorf("with announced addresses dropped: not evaluated %+v", r.NotEvaluated)
	}
}
