package sdp

import (
	"bytes"
	"fmt"
	"net/netip"
	"reflect"
	"strconv"
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
	f.Add([]byte(srtpOffer))
	f.Add([]byte("v=0\no=a  b\tc d\no=x y\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := Parse(b)
		if err != nil {
			if SameOrigin(b, "- 1 1") {
				t.Fatal("SameOrigin accepts a body Parse rejects")
			}
			return
		}
		// SameOrigin tells exactly what Parse gives as the Origin.
		if s.Origin != "" && !SameOrigin(b, s.Origin) || SameOrigin(b, s.Origin+"x") || SameOrigin(b, "") {
			t.Fatalf("SameOrigin disagrees with Parse's origin %q", s.Origin)
		}
		if len(s.Media) > MaxMedia {
			t.Fatalf("media %d over bound", len(s.Media))
		}
		for _, m := range s.Media {
			if len(m.Formats) > MaxFormats || len(m.Crypto) > MaxCrypto {
				t.Fatalf("formats %d or crypto %d over bound", len(m.Formats), len(m.Crypto))
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

// srtpOffer has an SDES section, a DTLS one by session-level fingerprint
// and a bare RTP/SAVPF one.
const srtpOffer = "v=0\r\no=- 1 1 IN IP4 192.0.2.1\r\ns=-\r\nc=IN IP4 192.0.2.1\r\nt=0 0\r\n" +
	"a=crypto:9 AES_CM_128_HMAC_SHA1_80 inline:session-level-is-ignored\r\n" +
	"m=audio 4000 RTP/SAVP 0\r\n" +
	"a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:PS1uQCVeeCFCanVmcjkpPywjNWhcYD0mXXtxaVBR|2^20|1:4\r\n" +
	"a=crypto:2 AES_CM_128_HMAC_SHA1_32 inline:NzB4d1BINUAvLEw6UzF3WSJ+PSdFcGdUJShpX1Zj\r\n" +
	"m=audio 4002 RTP/SAVPF 0\r\n" +
	"m=audio 4004 RTP/AVP 0\r\n"

func TestParseSRTP(t *testing.T) {
	s, err := Parse([]byte(srtpOffer))
	if err != nil {
		t.Fatal(err)
	}
	if got := []string{s.Media[0].SRTP(), s.Media[1].SRTP(), s.Media[2].SRTP()}; got[0] != KeyingSDES || got[1] != KeyingUnknown || got[2] != "" {
		t.Errorf("keying = %q", got)
	}
	if len(s.Media[0].Crypto) != 2 || string(s.Media[0].Crypto[1]) != "2 AES_CM_128_HMAC_SHA1_32 inline:NzB4d1BINUAvLEw6UzF3WSJ+PSdFcGdUJShpX1Zj" {
		t.Errorf("crypto = %q", s.Media[0].Crypto)
	}
	if printed := fmt.Sprintf("%v %+v %#v", s.Media[0], s.Media[0].Crypto, s.Media[0]); strings.Contains(printed, "inline:") {
		t.Errorf("printing media shows the key: %s", printed)
	}
	dtls, err := Parse([]byte("v=0\r\nc=IN IP4 192.0.2.1\r\na=fingerprint:sha-256 AB:CD\r\nm=audio 1 RTP/SAVPF 0\r\nm=audio 2 UDP/TLS/RTP/SAVPF 0\r\n"))
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range dtls.Media {
		if m.SRTP() != KeyingDTLS {
			t.Errorf("media %d: keying %q, want dtls", i, m.SRTP())
		}
	}
	many := "v=0\r\nm=audio 1 RTP/SAVP 0\r\n" + strings.Repeat("a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:x\r\n", MaxCrypto+2) + "a=crypto:" + strings.Repeat("x", 600) + "\r\n"
	if s, _ := Parse([]byte(many)); len(s.Media[0].Crypto) != MaxCrypto || s.Dropped != 3 {
		t.Errorf("crypto kept %d, dropped %d; want %d and 3", len(s.Media[0].Crypto), s.Dropped, MaxCrypto)
	}
}

// FuzzNumbers holds the written-out parsers to the standard library's:
// ipv4 accepts exactly the dotted quads netip.ParseAddr does, with the
// same address, and atoi agrees with strconv.Atoi.
func FuzzNumbers(f *testing.F) {
	for _, s := range []string{"192.0.2.1", "0.0.0.0", "255.255.255.255", "256.1.1.1", "01.2.3.4", "1.2.3", "1.2.3.4.",
		"1..2.3", "::1", "1.2.3.4%eth0", "0", "+5", "-0", "-12", "123456789", "1234567890", "", "+", "12a"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		want, err := netip.ParseAddr(string(b))
		if ip, ok := ipv4(b); ok && (err != nil || netip.AddrFrom4(ip) != want) {
			t.Errorf("ipv4(%q) = %v, ParseAddr: %v %v", b, ip, want, err)
		} else if !ok && err == nil && want.Is4() {
			t.Errorf("ipv4(%q) refused what ParseAddr took: %v", b, want)
		}
		n, ok := atoi(b)
		m, err := strconv.Atoi(string(b))
		if wantOK := len(b) > 0 && len(b) <= 9 && err == nil && m >= 0; ok != wantOK || ok && n != m {
			t.Errorf("atoi(%q) = %d %v, strconv.Atoi: %d %v", b, n, ok, m, err)
		}
	})
}

// FuzzSplitters holds the written-out splitters to the standard
// library's: nextField splits as bytes.Fields does, Unicode spaces
// included, trim trims as bytes.TrimSpace, lineEnd finds the line break
// bytes.IndexByte does and originLine the "\no=" bytes.Index does.
func FuzzSplitters(f *testing.F) {
	for _, s := range []string{"a b", " \t a\vb\f c ", "a\u00a0b\u2000c\u0085", "x\xe2\xc2\xa0y ", "\u3000", "0123456789abcdef\n",
		"v=0\r\no=- 1 1 IN IP4 h\r\n", "v=0\n\vo=\no=x\n\no", ""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var got [][]byte
		for f, rest := nextField(b); len(f) > 0; f, rest = nextField(rest) {
			got = append(got, f)
		}
		if want := bytes.Fields(b); len(got) != len(want) || len(want) > 0 && !reflect.DeepEqual(got, want) {
			t.Errorf("nextField splits %q into %q, bytes.Fields into %q", b, got, want)
		}
		if got, want := trim(b), bytes.TrimSpace(b); !bytes.Equal(got, want) {
			t.Errorf("trim(%q) = %q, bytes.TrimSpace: %q", b, got, want)
		}
		want := bytes.IndexByte(b, '\n')
		if want < 0 {
			want = len(b)
		}
		if got := lineEnd(b); got != want {
			t.Errorf("lineEnd(%q) = %d, want %d", b, got, want)
		}
		if got, want := originLine(b), bytes.Index(b, []byte("\no=")); got != want {
			t.Errorf("originLine(%q) = %d, want %d", b, got, want)
		}
	})
}

// BenchmarkParse is one offer as phones send it, parsed.
func BenchmarkParse(b *testing.B) {
	body := []byte(offer)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(body); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSameOrigin is a retransmitted offer told from its o= line.
func BenchmarkSameOrigin(b *testing.B) {
	body := []byte(offer)
	origin := mustParse(b, offer).Origin
	b.ReportAllocs()
	for b.Loop() {
		if !SameOrigin(body, origin) {
			b.Fatal("not the same origin")
		}
	}
}

// TestStaticTable holds the indexed table to the map it is built from.
func TestStaticTable(t *testing.T) {
	for pt := -1; pt < 130; pt++ {
		want, wantOK := static[pt]
		if got, ok := Static(pt); got != want || ok != wantOK {
			t.Errorf("Static(%d) = %v %v, want %v %v", pt, got, ok, want, wantOK)
		}
	}
}

// TestSameOrigin: a repeated body is told from its o= line before parsing,
// the last o= line of three fields counting, as Parse keeps it.
func TestSameOrigin(t *testing.T) {
	for _, c := range []struct {
		body, origin string
		want         bool
	}{
		{offer, mustParse(t, offer).Origin, true},
		{offer, mustParse(t, offer).Origin + "1", false},
		{"v=0\r\no=- 1 2 IN IP4 h\r\n", "- 1 2", true},
		{"v=0\r\no=- 1 3 IN IP4 h\r\n", "- 1 2", false},
		{"v=0\r\no=-  1\t2\r\n", "- 1 2", true},     // fields joined, as Parse does
		{"v=0\no=- 1 2\no=- 1 3\n", "- 1 2", false}, // the last one counts
		{"v=0\no=- 1 2\no=x y\n", "- 1 2", true},    // one of two fields is not kept
		{"x=0\no=- 1 2\n", "- 1 2", false},          // not SDP
		{"v=0\n", "", false},
	} {
		if got := SameOrigin([]byte(c.body), c.origin); got != c.want {
			t.Errorf("SameOrigin(%q, %q) = %v, want %v", c.body, c.origin, got, c.want)
		}
	}
}

func mustParse(t testing.TB, body string) *Session {
	t.Helper()
	s, err := Parse([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	return s
}
