package siplint

import (
	"maps"
	"strconv"
	"strings"
	"testing"
)

// Findings per rule over every kept message of each reference capture.
// tshark 4.0.17 agrees on each count: requests without Max-Forwards
// (`sip.Request-Line && !sip.Max-Forwards`: 3, 1334, 1), responses above
// 100 without a To tag (`sip.Status-Code > 100 && !sip.to.tag`: 3), and
// frames with a `branch=0` Via (`sip.Via.branch == "0"`: 2 and 2).
func TestValidateReference(t *testing.T) {
	for _, tc := range []struct {
		file string
		want map[string]int
	}{
		{file: "SIP_CALL_RTP_G711.pcap", want: map[string]int{"mandatory_header_missing": 3, "to_tag_missing": 3}},
		{file: "branch-scenario-sipp.pcapng", want: map[string]int{"mandatory_header_missing": 1334}},
		{file: "DTMFsipinfo.pcap", want: map[string]int{"via_branch_cookie": 2}},
		{file: "sip-488-Not-Acceptable-Here-codec-null.pcapng", want: map[string]int{"mandatory_header_missing": 1, "via_branch_cookie": 2}},
		{file: "RTP-Protocol.pcap", want: map[string]int{}},
		{file: "sip-rtp-g711.pcap", want: map[string]int{}},
		{file: "SIP-Call-Flow-Over-TCP.pcap", want: map[string]int{}},
		{file: "gen-sipp-hold-resume-rfc2833-udp.pcapng", want: map[string]int{}},
		{file: "ipv6frag.pcap", want: map[string]int{}},
		{file: "websocket-sip.pcapng", want: map[string]int{}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			sn := load(t, tc.file)
			got := map[string]int{}
			for _, d := range sn.Dialogs {
				for _, seq := range d.Messages() {
					m, ok := sn.Message(seq)
					if !ok {
						t.Fatal("a message was evicted")
					}
					v, err := Validate(m.Raw, m.Transport)
					if err != nil {
						t.Fatal(err)
					}
					for _, f := range v.Findings {
						got[f.Rule.ID]++
					}
				}
			}
			if !maps.Equal(got, tc.want) {
				t.Errorf("findings per rule %v, want %v", got, tc.want)
			}
		})
	}
}

const goodSDP = "v=0\r\no=- 1 1 IN IP4 192.0.2.1\r\ns=-\r\nc=IN IP4 192.0.2.1\r\nt=0 0\r\nm=audio 4000 RTP/AVP 0\r\na=rtpmap:0 PCMU/8000\r\n"

func inviteWith(headers, body string) string {
	return "INVITE sip:b@h SIP/2.0\r\n" + headers + "Content-Type: application/sdp\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
}

func TestValidateRules(t *testing.T) {
	good := "Via: SIP/2.0/UDP h;branch=z9hG4bK1\r\nMax-Forwards: 70\r\nFrom: <sip:a@h>;tag=1\r\nTo: <sip:b@h>\r\nCall-ID: c\r\nCSeq: 1 INVITE\r\nContact: <sip:a@h>\r\n"
	for _, tc := range []struct {
		name, raw, transport string
		want                 []string // rule ids found, in order
	}{
		{name: "good", raw: inviteWith(good, goodSDP), transport: "udp"},
		{name: "no Max-Forwards, no Contact", raw: inviteWith(strings.NewReplacer("Max-Forwards: 70\r\n", "", "Contact: <sip:a@h>\r\n", "").Replace(good), goodSDP), transport: "udp",
			want: []string{"mandatory_header_missing", "contact_missing"}},
		{name: "CSeq method", raw: inviteWith(strings.Replace(good, "1 INVITE", "1 ACK", 1), goodSDP), transport: "udp", want: []string{"cseq_method_mismatch"}},
		{name: "From tag and branch", raw: inviteWith(strings.NewReplacer(";tag=1", "", "branch=z9hG4bK1", "branch=1, SIP/2.0/UDP p").Replace(good), goodSDP), transport: "udp",
			want: []string{"from_tag_missing", "via_branch_cookie", "via_branch_cookie"}},
		{name: "short body", raw: strings.Replace(inviteWith(good, goodSDP), "Content-Length: 1", "Content-Length: 9", 1), transport: "udp", want: []string{"content_length_mismatch"}},
		{name: "no Content-Length on TCP", raw: "BYE sip:b@h SIP/2.0\r\n" + strings.Replace(strings.Replace(good, "INVITE", "BYE", 1), "<sip:b@h>", "<sip:b@h>;tag=2", 1) + "\r\n", transport: "tcp",
			want: []string{"content_length_mismatch"}},
		{name: "BYE without To tag", raw: "BYE sip:b@h SIP/2.0\r\n" + strings.Replace(good, "INVITE", "BYE", 1) + "Content-Length: 0\r\n\r\n", transport: "udp", want: []string{"to_tag_missing"}},
		{name: "SDP order, syntax, connection", raw: inviteWith(good, "v=0\r\no=- 1 1 IN IP4 h\r\ns=-\r\nt=0 0\r\nc=IN IP4 h\r\nm=audio 1 RTP/AVP 0\r\nX=1\r\nm=video 2 RTP/AVP 31\r\n"), transport: "udp",
			want: []string{"sdp_line_order", "sdp_line_syntax"}},
		{name: "SDP without s=, t= or c=", raw: inviteWith(good, "v=0\r\no=- 1 1 IN IP4 h\r\nm=audio 1 RTP/AVP 0\r\n"), transport: "udp",
			want: []string{"sdp_required_line_missing", "sdp_connection_missing", "sdp_required_line_missing"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := Validate([]byte(tc.raw), tc.transport)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range v.Findings {
				got = append(got, f.Rule.ID)
				if f.Rule.RFC == "" || f.Rule.Section == "" || f.Rule.Severity == "" {
					t.Errorf("%s: rule without RFC, section or severity", f.Rule.ID)
				}
			}
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Errorf("findings %v, want %v (%+v)", got, tc.want, v.Findings)
			}
			if len(v.Evaluated)+len(v.NotEvaluated) != len(rulesOf(ByValidate)) {
				t.Errorf("evaluated %v and not %v do not cover the %d rules", v.Evaluated, v.NotEvaluated, len(rulesOf(ByValidate)))
			}
		})
	}
	if _, err := Validate([]byte("not sip"), "udp"); err == nil {
		t.Error("an unparsable message validated")
	}
}

// TestValidateKeepsMaxFindings: a message breaking one rule more times
// than MaxFindings keeps MaxFindings findings and counts the rest.
func TestValidateKeepsMaxFindings(t *testing.T) {
	vias := strings.Repeat("Via: SIP/2.0/UDP h;branch=1\r\n", MaxFindings+8)
	raw := "OPTIONS sip:b@h SIP/2.0\r\n" + vias + "Max-Forwards: 70\r\nFrom: <sip:a@h>;tag=1\r\nTo: <sip:b@h>\r\nCall-ID: c\r\nCSeq: 1 OPTIONS\r\nContent-Length: 0\r\n\r\n"
	v, err := Validate([]byte(raw), "udp")
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Findings) != MaxFindings || v.More != 8 {
		t.Errorf("%d findings and %d more, want %d and 8", len(v.Findings), v.More, MaxFindings)
	}
}

// TestValidateMasksKeys: a broken a=crypto line is evidence, its SDES key
// masked.
func TestValidateMasksKeys(t *testing.T) {
	const key = "PS1uQCVeeCFCanVmcjkpPywjNWhcYD0mXXtxaVBR"
	good := "Via: SIP/2.0/UDP h;branch=z9hG4bK1\r\nMax-Forwards: 70\r\nFrom: <sip:a@h>;tag=1\r\nTo: <sip:b@h>\r\nCall-ID: c\r\nCSeq: 1 INVITE\r\nContact: <sip:a@h>\r\n"
	v, err := Validate([]byte(inviteWith(good, goodSDP+"a crypto:1 AES_CM_128_HMAC_SHA1_80 inline:"+key+"|2^20\r\n")), "udp")
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Findings) != 1 || v.Findings[0].Evidence != "a crypto:1 AES_CM_128_HMAC_SHA1_80 inline:REDACTED|2^20" {
		t.Errorf("findings %+v, want the broken line with its key masked", v.Findings)
	}
}
