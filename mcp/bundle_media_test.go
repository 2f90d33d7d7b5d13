package mcp

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"testing"
	"time"

	"fieldtap/services/netdecode"
	"fieldtap/services/rtp"
	"fieldtap/services/sip"
)

// mediaTestDeps builds one call: PCMU offer/answer, 50 packets each way
// with two lost toward the caller, and one RFC 4733 digit.
func mediaTestDeps(t *testing.T) Deps {
	t.Helper()
	d := testDeps()
	a := rtp.NewAnalyser(rtp.Options{})
	caller, callee := netip.MustParseAddrPort("192.0.2.1:4000"), netip.MustParseAddrPort("192.0.2.2:5000")
	t0 := time.Unix(1000, 0)
	sdpMsg := func(start string, media netip.AddrPort) {
		body := fmt.Sprintf("v=0\r\no=- 1 1 IN IP4 %s\r\nc=IN IP4 %s\r\nt=0 0\r\nm=audio %d RTP/AVP 0 101\r\na=rtpmap:101 telephone-event/8000\r\n",
			media.Addr(), media.Addr(), media.Port())
		raw := fmt.Sprintf("%s\r\nVia: SIP/2.0/UDP h;branch=z9hG4bK1\r\nFrom: <sip:a@h>;tag=1\r\nTo: <sip:b@h>\r\nCall-ID: call-1\r\nCSeq: 1 INVITE\r\nContent-Type: application/sdp\r\nContent-Length: %d\r\n\r\n%s", start, len(body), body)
		var m sip.Parsed
		if err := m.Parse([]byte(raw)); err != nil {
			t.Fatal(err)
		}
		a.SIPMessage(sip.Meta{Time: t0, Src: media, Dst: media}, &m)
	}
	sdpMsg("INVITE sip:b@h SIP/2.0", caller)
	sdpMsg("SIP/2.0 200 OK", callee)
	send := func(src, dst netip.AddrPort, ssrc uint32, skip map[int]bool) {
		for i := range 50 {
			if skip[i] {
				continue
			}
			p := make([]byte, 12+160)
			p[0], p[1] = 0x80, 0
			binary.BigEndian.PutUint16(p[2:], uint16(i))
			binary.BigEndian.PutUint32(p[4:], uint32(i*160))
			binary.BigEndian.PutUint32(p[8:], ssrc)
			a.Datagram(netdecode.Datagram{Time: t0.Add(time.Duration(i) * 20 * time.Millisecond), Src: src, Dst: dst, Payload: p})
		}
	}
	send(caller, callee, 0xA, nil)
	send(callee, caller, 0xB, map[int]bool{10: true, 11: true})
	for i := range 3 { // one digit "5", end packet sent three times
		p := []byte{0x80, 101, 0, byte(50 + i), 0, 0, 0x1F, 0x40, 0, 0, 0, 0xA, 5, 0x80, 0, 160} // same SSRC as the audio, as phones send
		a.Datagram(netdecode.Datagram{Time: t0.Add(time.Second + time.Duration(i)*20*time.Millisecond), Src: caller, Dst: callee, Payload: p})
	}
	d.Media = a
	d.MediaInterval = rtp.DefaultInterval
	return d
}

func TestMediaTools(t *testing.T) {
	d := mediaTestDeps(t)
	tests := []struct {
		name  string
		tool  string
		args  map[string]any
		check func(t *testing.T, m map[string]any)
	}{
		{name: "streams", tool: toolRTPStreams, args: map[string]any{}, check: func(t *testing.T, m map[string]any) {
			if n := len(m["items"].([]any)); n != 2 { // events share the caller's audio SSRC
				t.Errorf("streams = %d", n)
			}
		}},
		{name: "streams min loss", tool: toolRTPStreams, args: map[string]any{"min_loss_pct": 1.0}, check: func(t *testing.T, m map[string]any) {
			items := m["items"].([]any)
			if len(items) != 1 || items[0].(map[string]any)["lost"].(float64) != 2 {
				t.Errorf("items = %v", items)
			}
		}},
		{name: "stats by call", tool: toolRTPStats, args: map[string]any{"call_id": "call-1"}, check: func(t *testing.T, m map[string]any) {
			ss := m["data"].(map[string]any)["streams"].([]any)
			if len(ss) != 2 || len(ss[0].(map[string]any)["intervals"].([]any)) == 0 {
				t.Errorf("streams = %v", ss)
			}
		}},
		{name: "stats needs one key", tool: toolRTPStats, args: map[string]any{}, check: func(t *testing.T, m map[string]any) {
			if m["ok"] != false {
				t.Errorf("answer = %v", m)
			}
		}},
		{name: "diagnostics", tool: toolMediaDiagnostics, args: map[string]any{"call_id": "call-1"}, check: func(t *testing.T, m map[string]any) {
			data := m["data"].(map[string]any)
			if data["applicable"] != true || len(data["findings"].([]any)) == 0 {
				t.Errorf("data = %v", data)
			}
		}},
		{name: "diagnostics unknown call", tool: toolMediaDiagnostics, args: map[string]any{"call_id": "nope"}, check: func(t *testing.T, m map[string]any) {
			data := m["data"].(map[string]any)
			if data["applicable"] != false || data["reason"] == "" {
				t.Errorf("data = %v", data)
			}
		}},
		{name: "codec negotiation", tool: toolCodecNegotiation, args: map[string]any{"call_id": "call-1"}, check: func(t *testing.T, m map[string]any) {
			if v := m["data"].(map[string]any)["verdict"]; v != "ok" {
				t.Errorf("verdict = %v", v)
			}
		}},
		{name: "dtmf", tool: toolDTMFEvents, args: map[string]any{"call_id": "call-1"}, check: func(t *testing.T, m map[string]any) {
			items := m["items"].([]any)
			if len(items) != 1 {
				t.Fatalf("events = %v", items)
			}
			e := items[0].(map[string]any)
			if e["digit"] != "5" || e["method"] != rtp.MethodRFC4733 || e["end_repeats"].(float64) != 2 {
				t.Errorf("event = %v", e)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.check(t, callTool(t, d, tc.tool, tc.args))
		})
	}
}

func TestMediaToolsWithoutStore(t *testing.T) {
	m := callTool(t, testDeps(), toolRTPStreams, map[string]any{})
	if m["ok"] != false {
		t.Errorf("answer = %v", m)
	}
}

// TestMediaCodecFenced: a codec name is SDP text the sender wrote, so
// rtp_streams and check_codec_negotiation fence it, while the codec
// filter still compares the raw name.
func TestMediaCodecFenced(t *testing.T) {
	const hostile = "X⟦Y\x1b" // a bracket to rewrite, an ESC to drop
	d := testDeps()
	a := rtp.NewAnalyser(rtp.Options{})
	caller, callee := netip.MustParseAddrPort("192.0.2.1:4000"), netip.MustParseAddrPort("192.0.2.2:5000")
	t0 := time.Unix(1000, 0)
	for _, side := range []struct {
		start string
		media netip.AddrPort
	}{{"INVITE sip:b@h SIP/2.0", caller}, {"SIP/2.0 200 OK", callee}} {
		body := fmt.Sprintf("v=0\r\no=- 1 1 IN IP4 %s\r\nc=IN IP4 %s\r\nt=0 0\r\nm=audio %d RTP/AVP 96\r\na=rtpmap:96 %s/8000\r\n",
			side.media.Addr(), side.media.Addr(), side.media.Port(), hostile)
		raw := fmt.Sprintf("%s\r\nVia: SIP/2.0/UDP h;branch=z9hG4bK1\r\nFrom: <sip:a@h>;tag=1\r\nTo: <sip:b@h>\r\nCall-ID: call-f\r\nCSeq: 1 INVITE\r\nContent-Type: application/sdp\r\nContent-Length: %d\r\n\r\n%s", side.start, len(body), body)
		var m sip.Parsed
		if err := m.Parse([]byte(raw)); err != nil {
			t.Fatal(err)
		}
		a.SIPMessage(sip.Meta{Time: t0, Src: side.media, Dst: side.media}, &m)
	}
	for i := range 3 {
		p := make([]byte, 12+160)
		p[0], p[1] = 0x80, 96
		binary.BigEndian.PutUint16(p[2:], uint16(i))
		binary.BigEndian.PutUint32(p[8:], 0xC)
		a.Datagram(netdecode.Datagram{Time: t0.Add(time.Duration(i) * 20 * time.Millisecond), Src: caller, Dst: callee, Payload: p})
	}
	d.Media = a
	want := fenceOpen + "X[Y" + fenceClose
	cases := []struct {
		name string
		tool string
		args map[string]any
		get  func(m map[string]any) any
	}{
		{name: "rtp_streams codec", tool: toolRTPStreams, args: map[string]any{"codec": hostile},
			get: func(m map[string]any) any { return m["items"].([]any)[0].(map[string]any)["codec"] }},
		{name: "rtp_streams payload type codec", tool: toolRTPStreams, args: map[string]any{},
			get: func(m map[string]any) any {
				return m["items"].([]any)[0].(map[string]any)["payload_types"].([]any)[0].(map[string]any)["codec"]
			}},
		{name: "negotiation flowed", tool: toolCodecNegotiation, args: map[string]any{"call_id": "call-f"},
			get: func(m map[string]any) any { return m["data"].(map[string]any)["flowed"].([]any)[0] }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.get(callTool(t, d, tc.tool, tc.args)); got != want {
				t.Errorf("got %q, want %q", got, want)
			}
		})
	}
}
