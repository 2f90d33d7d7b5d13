package siplint

import (
	"testing"
	"unicode/utf8"
)

// FuzzValidate: any bytes on any transport validate or are refused
// without a panic, and the findings stay bounded.
func FuzzValidate(f *testing.F) {
	f.Add([]byte(inviteWith("Via: SIP/2.0/UDP h;branch=z9hG4bK1\r\nFrom: <sip:a@h>;tag=1\r\nTo: <sip:b@h>\r\nCall-ID: c\r\nCSeq: 1 INVITE\r\n", goodSDP)), "udp")
	f.Add([]byte(msgAt("SIP/2.0 200 OK", "1", "INVITE", "", true)), "tcp")
	f.Add([]byte(inviteWith("Via: a, b;branch=\"x,y\"\r\nCSeq: 1\r\n", "v=1\r\nx\r\n=\r\nm=\r\nt=\r\nr=1\r\nt=0 0\r\na=\r\n")), "tls")
	f.Fuzz(func(t *testing.T, raw []byte, transport string) {
		v, err := Validate(raw, transport)
		if err != nil {
			return
		}
		if len(v.Findings) > MaxFindings {
			t.Fatalf("%d findings, over %d", len(v.Findings), MaxFindings)
		}
		for _, fd := range v.Findings {
			if !utf8.ValidString(fd.Detail) && utf8.ValidString(string(raw)) {
				t.Fatalf("detail %q is not UTF-8", fd.Detail)
			}
		}
	})
}
