package sip

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fieldtap/services/netdecode"
	"fieldtap/tools/refdata"
)

const invite = "INVITE sip:bob@example.com SIP/2.0\r\n" +
	"Via: SIP/2.0/UDP 192.0.2.1:5060;branch=z9hG4bK776asdhds\r\n" +
	"Max-Forwards: 70\r\n" +
	"To: Bob <sip:bob@example.com>\r\n" +
	"From: \"Alice\" <sip:alice@example.com>;tag=1928301774\r\n" +
	"Call-ID: a84b4c76e66710@pc33.example.com\r\n" +
	"CSeq: 314159 INVITE\r\n" +
	"Contact: <sip:alice@192.0.2.1>\r\n" +
	"Content-Type: application/sdp\r\n" +
	"Content-Length: 4\r\n\r\nv=0\n"

func TestParse(t *testing.T) {
	long := strings.Repeat("x", MaxHeaderLine)
	many := strings.Repeat("X-A: 1\r\n", tooManyHeaders())
	tests := []struct {
		name, msg string
		wantErr   string
		check     func(t *testing.T, m *Parsed)
	}{
		{name: "request", msg: invite, check: func(t *testing.T, m *Parsed) {
			if !m.Request || string(m.Method) != "INVITE" || string(m.RequestURI) != "sip:bob@example.com" {
				t.Errorf("start line: %q %q", m.Method, m.RequestURI)
			}
			if string(m.Get(HCallID)) != "a84b4c76e66710@pc33.example.com" || m.CSeqNum != 314159 || string(m.CSeqMethod) != "INVITE" {
				t.Errorf("call-id %q cseq %d %q", m.Get(HCallID), m.CSeqNum, m.CSeqMethod)
			}
			if string(m.Body) != "v=0\n" || m.BodyShort {
				t.Errorf("body %q", m.Body)
			}
			if u := UserOf(URIOf(m.Get(HFrom))); string(u) != "alice" {
				t.Errorf("from user %q", u)
			}
			if d := DisplayName(m.Get(HFrom)); string(d) != "Alice" {
				t.Errorf("display %q", d)
			}
			if tag := Param(m.Get(HFrom), "tag"); string(tag) != "1928301774" {
				t.Errorf("tag %q", tag)
			}
			if b := Param(m.Get(HVia), "branch"); string(b) != "z9hG4bK776asdhds" {
				t.Errorf("branch %q", b)
			}
		}},
		{name: "compact forms", msg: "SIP/2.0 180 Ringing\r\nv: SIP/2.0/UDP h;branch=z9hG4bK1\r\ni: abc\r\nf: <sip:a@h>;tag=1\r\nt: <sip:b@h>;tag=2\r\nCSeq: 1 INVITE\r\nl: 0\r\n\r\n",
			check: func(t *testing.T, m *Parsed) {
				if m.Request || m.StatusCode != 180 || string(m.Reason) != "Ringing" {
					t.Errorf("status %d %q", m.StatusCode, m.Reason)
				}
				if string(m.Get(HCallID)) != "abc" || string(Param(m.Get(HTo), "tag")) != "2" || !m.Has(HContentLength) {
					t.Errorf("compact headers not mapped: %q", m.Get(HCallID))
				}
			}},
		{name: "folded header", msg: "OPTIONS sip:h SIP/2.0\r\nCall-ID: x\r\nSubject: one\r\n  two\r\n\tthree\r\nCSeq: 2 OPTIONS\r\n\r\n",
			check: func(t *testing.T, m *Parsed) {
				if got := string(Unfold(m.Get(HSubject))); got != "one two three" {
					t.Errorf("unfolded %q", got)
				}
				if m.CSeqNum != 2 {
					t.Errorf("header after fold lost: cseq %d", m.CSeqNum)
				}
			}},
		{name: "bare LF and leading CRLF", msg: "\r\nBYE sip:h SIP/2.0\nCall-ID: y\nCSeq: 3 BYE\n\n"},
		{name: "body short of Content-Length", msg: "MESSAGE sip:h SIP/2.0\r\nCall-ID: z\r\nCSeq: 1 MESSAGE\r\nContent-Length: 100\r\n\r\nhi",
			check: func(t *testing.T, m *Parsed) {
				if !m.BodyShort || string(m.Body) != "hi" {
					t.Errorf("short body not flagged: %v %q", m.BodyShort, m.Body)
				}
			}},
		{name: "empty", msg: "\r\n\r\n", wantErr: ReasonEmpty},
		{name: "garbage start line", msg: "HELLO\r\n\r\n", wantErr: ReasonStartLine},
		{name: "bad status", msg: "SIP/2.0 99 Odd\r\n\r\n", wantErr: ReasonStatusCode},
		{name: "header line too long", msg: "OPTIONS sip:h SIP/2.0\r\nX: " + long + "\r\n\r\n", wantErr: ReasonLineTooLong},
		{name: "too many headers", msg: "OPTIONS sip:h SIP/2.0\r\n" + many + "\r\n", wantErr: ReasonTooMany},
		{name: "header without colon", msg: "OPTIONS sip:h SIP/2.0\r\nbroken\r\n\r\n", wantErr: ReasonHeaderSyntax},
		{name: "no end of headers", msg: "OPTIONS sip:h SIP/2.0\r\nCall-ID: x\r\n", wantErr: ReasonNoHeaderEnd},
		{name: "bad content length", msg: "OPTIONS sip:h SIP/2.0\r\nContent-Length: -1\r\n\r\n", wantErr: ReasonContentLength},
		{name: "too large", msg: "OPTIONS sip:h SIP/2.0\r\n" + strings.Repeat("a", MaxMessage), wantErr: ReasonTooLarge},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var m Parsed
			err := m.Parse([]byte(tc.msg))
			if tc.wantErr != "" {
				var pe *ParseError
				if !errors.As(err, &pe) || pe.Reason != tc.wantErr {
					t.Fatalf("err = %v, want reason %s", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := m.Validate(); err != nil {
				t.Fatal(err)
			}
			if tc.check != nil {
				tc.check(t, &m)
			}
		})
	}
}

// tooManyHeaders is MaxHeaders+1: one more than the parser accepts.
func tooManyHeaders() int { return MaxHeaders + 1 }

func TestFrameLen(t *testing.T) {
	two := invite + invite
	tests := []struct {
		name    string
		in      string
		want    int
		wantErr bool
	}{
		{name: "one of two", in: two, want: len(invite)},
		{name: "partial headers", in: invite[:40], want: 0},
		{name: "partial body", in: invite[:len(invite)-2], want: 0},
		{name: "keepalive before", in: "\r\n\r\n" + invite, want: 4 + len(invite)},
		{name: "compact length", in: "SIP/2.0 200 OK\r\nl: 3\r\n\r\nabcXYZ", want: 27},
		{name: "no end within the cap", in: "SIP/2.0 200 OK\r\n" + strings.Repeat("a", MaxMessage), wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n, err := FrameLen([]byte(tc.in))
			if (err != nil) != tc.wantErr || n != tc.want {
				t.Errorf("FrameLen = %d, %v; want %d, err %v", n, err, tc.want, tc.wantErr)
			}
		})
	}
}

func TestParseAllocatesNothingPerHeader(t *testing.T) {
	var m Parsed
	b := []byte(invite)
	_ = m.Parse(b)
	if n := testing.AllocsPerRun(100, func() { _ = m.Parse(b) }); n != 0 {
		t.Errorf("Parse allocates %.1f times per message, want 0", n)
	}
}

func BenchmarkParseSIP(b *testing.B) {
	var m Parsed
	msg := []byte(invite)
	b.ReportAllocs()
	b.SetBytes(int64(len(msg)))
	for b.Loop() {
		if err := m.Parse(msg); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
}

// sipPayloads collects every SIP payload in the reference captures.
func sipPayloads(t testing.TB) [][]byte {
	var out [][]byte
	files, _ := filepath.Glob(filepath.Join(refdata.Path(t, "sip"), "*.pcap*")) // none without the data
	for _, f := range files {
		st, _ := loadCapture(t, f)
		sn := st.Snapshot()
		for _, d := range sn.Dialogs {
			for _, seq := range d.Messages() {
				if m, ok := sn.Message(seq); ok {
					out = append(out, m.Raw)
				}
			}
		}
	}
	return out
}

func FuzzParseSIP(f *testing.F) {
	f.Add([]byte(invite))
	f.Add([]byte("SIP/2.0 200 OK\r\ni: x\r\nl: 0\r\n\r\n"))
	seeds := sipPayloads(f)
	for i, p := range seeds {
		if i%7 == 0 || len(seeds) < 64 { // a spread, not all 9000 branch-scenario messages
			f.Add(p)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var m Parsed
		if err := m.Parse(b); err == nil {
			_ = m.Validate()
			if m.Size > len(b) {
				t.Fatalf("size %d beyond input %d", m.Size, len(b))
			}
			for _, h := range m.Headers {
				_ = Unfold(h.Value)
				_ = Param(h.Value, "tag")
				_ = UserOf(URIOf(h.Value))
				_ = DisplayName(h.Value)
			}
		}
		_, _ = FrameLen(b)
		_ = LooksLikeSIP(b)
	})
}

// FuzzAnalyserTCP feeds arbitrary bytes as one TCP stream: framing,
// WebSocket and classification must never panic.
func FuzzAnalyserTCP(f *testing.F) {
	f.Add([]byte(invite + invite))
	f.Add([]byte("GET / HTTP/1.1\r\nUpgrade: websocket\r\n\r\n\x81\x05hello"))
	f.Add([]byte{0x16, 0x03, 0x01, 0x00, 0x05, 0x01})
	f.Fuzz(func(t *testing.T, b []byte) {
		a := NewAnalyser(newStore(t, Limits{Dialogs: 4, MessagesPerDialog: 4}), netdecode.Options{})
		s := &netdecode.Stream{}
		for len(b) > 0 {
			n := a.TCP(s, timeZero, b)
			if n <= 0 {
				break
			}
			b = b[n:]
		}
		if ss, _ := a.Stats(); ss.DecodePanics != 0 {
			t.Fatal("panic")
		}
	})
}

var timeZero = time.Unix(0, 0)

// TestCommonName holds the common names' short cut to headerID, and
// leaves every other spelling to the general path.
func TestCommonName(t *testing.T) {
	pad := strings.Repeat(" ", len("Content-Length:"))
	for _, name := range []string{"Via", "From", "To", "Call-ID", "CSeq", "Contact", "Content-Type", "Content-Length", "Max-Forwards", "User-Agent", "Server"} {
		n, id := commonName([]byte(name + ":" + pad))
		if n != len(name) || id != headerID([]byte(name)) || id == HOther {
			t.Errorf("commonName(%q) = %d, %d; want %d, %d", name, n, id, len(name), headerID([]byte(name)))
		}
	}
	for _, line := range []string{"via:", "Via :", " Via:", "Vias:", "Call-Id:", "Contact-X:", "Subject:", "Via:"} {
		if n, _ := commonName([]byte(line + "\r\n")); n != 0 {
			t.Errorf("commonName(%q) = %d, want the general path", line, n)
		}
	}
}
