package sdp

import (
	"net/netip"
	"strings"
	"testing"
)

const offer = "v=0\r\no=alice 2890844526 2890844526 IN IP4 host.example\r\ns=-\r\nc=IN IP4 192.0.2.10\r\nt=0 0\r\n" +
	"m=audio 49170 RTP/AVP 0 8 101\r\na=rtpmap:101 telephone-event/8000\r\na=fmtp:101 0-15\r\na=ptime:20\r\na=sendrecv\r\n"

func TestParse(t *testing.T) {
	tests := []struct {
		name      string
		body      string
		addr      string // first media's Addr, "" for none
		direction string
		rtcp      int
		hold      bool
		formats   []string
	}{
		{name: "offer", body: offer, addr: "192.0.2.10:49170", direction: SendRecv, rtcp: 49171, formats: []string{"PCMU", "PCMA", "telephone-event"}},
		{name: "hold sendonly", body: strings.Replace(offer, "a=sendrecv", "a=sendonly", 1), addr: "192.0.2.10:49170", direction: SendOnly, rtcp: 49171, hold: true, formats: []string{"PCMU", "PCMA", "telephone-event"}},
		{name: "hold 0.0.0.0", body: "v=0\nc=IN IP4 0.0.0.0\nm=audio 4000 RTP/AVP 0\na=inactive\n", addr: "0.0.0.0:4000", direction: Inactive, rtcp: 4001, hold: true, formats: []string{"PCMU"}},
		{name: "session direction", body: "v=0\nc=IN IP4 10.0.0.1\na=recvonly\nm=audio 4000 RTP/AVP 18\n", addr: "10.0.0.1:4000", direction: RecvOnly, rtcp: 4001, formats: []string{"G729"}},
		{name: "media c= and rtcp-mux", body: "v=0\nc=IN IP4 10.0.0.1\nm=audio 5000 RTP/AVP 96\nc=IN IP6 2001:db8::1\na=rtpmap:96 opus/48000/2\na=rtcp-mux\n", addr: "[2001:db8::1]:5000", direction: SendRecv, rtcp: 5000, formats: []string{"opus"}},
		{name: "a=rtcp", body: "v=0\nc=IN IP4 10.0.0.1\nm=audio 5000 RTP/AVP 0\na=rtcp:6001 IN IP4 10.0.0.1\n", addr: "10.0.0.1:5000", direction: SendRecv, rtcp: 6001, formats: []string{"PCMU"}},
		{name: "rejected", body: "v=0\nc=IN IP4 10.0.0.1\nm=audio 0 RTP/AVP 0\n", direction: SendRecv, formats: []string{"PCMU"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Parse([]byte(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			if len(s.Media) != 1 {
				t.Fatalf("media = %d, want 1", len(s.Media))
			}
			m := s.Media[0]
			a, ok := m.Addr()
			if got := map[bool]string{true: a.String()}[ok]; got != tc.addr {
				t.Errorf("addr = %q, want %q", got, tc.addr)
			}
			if m.Direction != tc.direction || m.RTCPPort != tc.rtcp || m.Hold() != tc.hold {
				t.Errorf("direction %s rtcp %d hold %v, want %s %d %v", m.Direction, m.RTCPPort, m.Hold(), tc.direction, tc.rtcp, tc.hold)
			}
			var enc []string
			for _, f := range m.Formats {
				enc = append(enc, f.Encoding)
			}
			if strings.Join(enc, ",") != strings.Join(tc.formats, ",") {
				t.Errorf("formats = %v, want %v", enc, tc.formats)
			}
		})
	}
}

func TestParseDetails(t *testing.T) {
	s, err := Parse([]byte(offer))
	if err != nil {
		t.Fatal(err)
	}
	m := s.Media[0]
	f, _ := m.Format(101)
	if f.Fmtp != "0-15" || ClockRate(f) != 8000 || !IsTelephoneEvent(f) || m.Ptime != 20 {
		t.Errorf("format 101 = %+v ptime %d", f, m.Ptime)
	}
	if s.Conn != netip.MustParseAddr("192.0.2.10") || s.Origin != "alice 2890844526 2890844526" {
		t.Errorf("session = %+v", s)
	}
}

func TestParseBounds(t *testing.T) {
	var b strings.Builder
	b.WriteString("v=0\nc=IN IP4 10.0.0.1\n")
	for range MaxMedia + 3 {
		b.WriteString("m=audio 4000 RTP/AVP 0\na=sendonly\n")
	}
	s, err := Parse([]byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Media) != MaxMedia || s.Dropped != 3 {
		t.Errorf("media %d dropped %d", len(s.Media), s.Dropped)
	}
	if _, err := Parse([]byte("hello")); err != ErrNotSDP {
		t.Errorf("err = %v", err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(offer))
	f.Add([]byte("v=0\nm=audio 1/2 RTP/AVP 0 x 200\na=rtpmap:\na=fmtp:0\nc=IN IP4 1.2.3.4/127/3\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := Parse(b)
		if err != nil {
			return
		}
		if len(s.Media) > MaxMedia {
			t.Fatalf("media %d over bound", len(s.Media))
		}
		for _, m := range s.Media {
			if len(m.Formats) > MaxFormats {
				t.Fatalf("formats %d over bound", len(m.Formats))
			}
			m.Addr()
		}
	})
}

func TestKnownEncoding(t *testing.T) {
	cases := []struct {
		name  string
		in    string
		want  string
		known bool
	}{
		{name: "static as written", in: "PCMU", want: "PCMU", known: true},
		{name: "static in lower case", in: "pcma", want: "PCMA", known: true},
		{name: "well-known dynamic", in: "opus", want: "OPUS", known: true},
		{name: "dynamic mixed case", in: "Telephone-Event", want: "TELEPHONE-EVENT", known: true},
		{name: "unknown name", in: "X-SECRET", known: false},
		{name: "control characters", in: "PCMU\x1b", known: false},
		{name: "empty", in: "", known: false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, known := KnownEncoding(tc.in)
			if got != tc.want || known != tc.known {
				t.Errorf("KnownEncoding(%q) = %q, %v; want %q, %v", tc.in, got, known, tc.want, tc.known)
			}
		})
	}
}

// TestOriginFieldsJoined: o= keeps "user id version" single-spaced
// whatever blanks separate them (found by a differential fuzz against the
// allocating parser this one replaced).
func TestOriginFieldsJoined(t *testing.T) {
	for _, tc := range []struct{ name, body, want string }{
		{name: "single spaces", body: "v=0\no=- 1 2 IN IP4 h\n", want: "- 1 2"},
		{name: "form feed", body: "v=\no=0 0\f0", want: "0 0 0"},
		{name: "tabs and runs", body: "v=0\no=a\t\tb  c d\n", want: "a b c"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Parse([]byte(tc.body))
			if err != nil || s.Origin != tc.want {
				t.Errorf("Origin = %q, %v; want %q", s.Origin, err, tc.want)
			}
		})
	}
}

func TestSRTP(t *testing.T) {
	for _, c := range []struct {
		body string
		want bool
	}{
		{"v=0\r\nc=IN IP4 10.0.0.1\r\nm=audio 4000 RTP/AVP 0\r\n", false},
		{"v=0\r\nc=IN IP4 10.0.0.1\r\nm=audio 4000 RTP/SAVP 0\r\n", true},
		{"v=0\r\nc=IN IP4 10.0.0.1\r\nm=audio 4000 UDP/TLS/RTP/SAVPF 111\r\n", true},
		{"v=0\r\nc=IN IP4 10.0.0.1\r\nm=audio 4000 RTP/AVP 0\r\na=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:WVNfX19zZW1jdGwgKCkgewkyMjA7fQp9CnVubGVz\r\n", true},
	} {
		s, err := Parse([]byte(c.body))
		if err != nil || len(s.Media) != 1 {
			t.Fatalf("%q: %v, %d media", c.body, err, len(s.Media))
		}
		if got := s.Media[0].SRTP(); got != c.want {
			t.Errorf("%q: SRTP %v, want %v", c.body, got, c.want)
		}
	}
}
