package siplint

import (
	"fmt"
	"net/netip"
	"testing"
	"time"

	"fieldtap/services/sip"
)

const sdp = "v=0\r\no=- 1 1 IN IP4 192.0.2.1\r\ns=-\r\nc=IN IP4 192.0.2.1\r\nt=0 0\r\nm=audio 4000 RTP/AVP 0\r\n"

// msgAt builds one message of dialog "g"; toTag is the To header's tag
// parameter ("" for none); withSDP adds an SDP body.
func msgAt(start, cseq, method, toTag string, withSDP bool) string {
	to := "<sip:b@h>"
	if toTag != "" {
		to += ";" + toTag
	}
	body, ct := "", ""
	if withSDP {
		body, ct = sdp, "Content-Type: application/sdp\r\n"
	}
	return fmt.Sprintf("%s\r\nVia: SIP/2.0/UDP h;branch=z9hG4bK%s%s\r\nFrom: <sip:a@h>;tag=1\r\nTo: %s\r\nCall-ID: g\r\nCSeq: %s %s\r\n%sContent-Length: %d\r\n\r\n%s",
		start, method, cseq, to, cseq, method, ct, len(body), body)
}

func add(t *testing.T, st *sip.Store, i int, raw string) {
	t.Helper()
	var m sip.Parsed
	if err := m.Parse([]byte(raw)); err != nil {
		t.Fatal(err)
	}
	st.Add(sip.Meta{Time: time.Unix(100, 0).Add(time.Duration(i) * time.Second), Src: netip.MustParseAddrPort("192.0.2.1:5060"),
		Dst: netip.MustParseAddrPort("192.0.2.2:5060"), Transport: sip.TransportUDP}, &m, []byte(raw))
}
