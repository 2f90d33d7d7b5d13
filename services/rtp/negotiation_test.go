package rtp

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"
	"unicode"

	"fieldtap/services/netdecode"
	"fieldtap/services/sip"
)

var (
	callerMedia = netip.MustParseAddrPort("192.0.2.1:4000")
	calleeMedia = netip.MustParseAddrPort("192.0.2.2:5000")
)

// sdpBody is an audio offer or answer at media listing formats, with the
// extra a= lines given.
func sdpBody(media netip.AddrPort, port int, formats string, attrs ...string) string {
	b := fmt.Sprintf("v=0\r\no=- 1 1 IN IP4 %s\r\nc=IN IP4 %s\r\nt=0 0\r\nm=audio %d RTP/AVP %s\r\n", media.Addr(), media.Addr(), port, formats)
	for _, a := range attrs {
		b += "a=" + a + "\r\n"
	}
	return b
}

// signal feeds one SIP message of call to a, with body as SDP when set.
func signal(t *testing.T, a *Analyser, call, start, body string, from netip.AddrPort) {
	t.Helper()
	ct := ""
	if body != "" {
		ct = "Content-Type: application/sdp\r\n"
	}
	raw := fmt.Sprintf("%s\r\nVia: SIP/2.0/UDP h;branch=z9hG4bK1\r\nFrom: <sip:a@h>;tag=1\r\nTo: <sip:b@h>\r\nCall-ID: %s\r\nCSeq: 1 INVITE\r\n%sContent-Length: %d\r\n\r\n%s",
		start, call, ct, len(body), body)
	var m sip.Parsed
	if err := m.Parse([]byte(raw)); err != nil {
		t.Fatal(err)
	}
	a.SIPMessage(sip.Meta{Time: time.Unix(1000, 0), Src: from, Dst: from}, &m)
}

// flow sends n RTP packets of pt from the caller to the callee.
func flow(a *Analyser, pt uint8, n int) {
	for i := range n {
		a.Datagram(&netdecode.Datagram{Time: time.Unix(1001, 0).Add(time.Duration(i) * 20 * time.Millisecond), Src: callerMedia, Dst: calleeMedia,
			Payload: rtpPacket(pt, uint16(i), uint32(i*160), 0xC0FFEE, make([]byte, 160))})
	}
}

func TestNegotiate(t *testing.T) {
	pcmu := sdpBody(callerMedia, int(callerMedia.Port()), "0")
	cases := []struct {
		name   string
		setup  func(t *testing.T, a *Analyser)
		want   string
		reason string // in the reason
		shared string // negotiated, joined by ","
		flowed string
	}{
		{name: "no SDP", setup: func(*testing.T, *Analyser) {}, want: VerdictNoSDP, reason: "no SDP body"},
		{name: "offer without answer", setup: func(t *testing.T, a *Analyser) {
			signal(t, a, "c", "INVITE sip:b@h SIP/2.0", pcmu, callerMedia)
		}, want: VerdictNoAnswer},
		{name: "offer refused", setup: func(t *testing.T, a *Analyser) {
			signal(t, a, "c", "INVITE sip:b@h SIP/2.0", pcmu, callerMedia)
			signal(t, a, "c", "SIP/2.0 488 Not Acceptable Here", "", calleeMedia)
		}, want: VerdictRejected, reason: "refused with 488"},
		{name: "answer port 0", setup: func(t *testing.T, a *Analyser) {
			signal(t, a, "c", "INVITE sip:b@h SIP/2.0", pcmu, callerMedia)
			signal(t, a, "c", "SIP/2.0 200 OK", sdpBody(calleeMedia, 0, "0"), calleeMedia)
		}, want: VerdictRejected, reason: "port to 0", shared: "PCMU"},
		{name: "no common codec", setup: func(t *testing.T, a *Analyser) {
			signal(t, a, "c", "INVITE sip:b@h SIP/2.0", pcmu, callerMedia)
			signal(t, a, "c", "SIP/2.0 200 OK", sdpBody(calleeMedia, int(calleeMedia.Port()), "8"), calleeMedia)
		}, want: VerdictNoCommonCodec},
		{name: "ok", setup: func(t *testing.T, a *Analyser) {
			signal(t, a, "c", "INVITE sip:b@h SIP/2.0", sdpBody(callerMedia, int(callerMedia.Port()), "0 8"), callerMedia)
			signal(t, a, "c", "SIP/2.0 200 OK", sdpBody(calleeMedia, int(calleeMedia.Port()), "8 0"), calleeMedia)
			flow(a, 0, 5)
		}, want: VerdictOK, shared: "PCMA,PCMU", flowed: "PCMU"},
		{name: "unnegotiated codec flowed", setup: func(t *testing.T, a *Analyser) {
			signal(t, a, "c", "INVITE sip:b@h SIP/2.0", pcmu, callerMedia)
			signal(t, a, "c", "SIP/2.0 200 OK", sdpBody(calleeMedia, int(calleeMedia.Port()), "0"), calleeMedia)
			flow(a, 18, 5)
		}, want: VerdictUnnegotiated, reason: "media carried codec G729", shared: "PCMU", flowed: "G729"},
		{name: "names compare without case", setup: func(t *testing.T, a *Analyser) {
			signal(t, a, "c", "INVITE sip:b@h SIP/2.0", sdpBody(callerMedia, int(callerMedia.Port()), "96", "rtpmap:96 opus/48000/2"), callerMedia)
			signal(t, a, "c", "SIP/2.0 200 OK", sdpBody(calleeMedia, int(calleeMedia.Port()), "97", "rtpmap:97 OPUS/48000/2"), calleeMedia)
		}, want: VerdictOK, shared: "OPUS"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := NewAnalyser(Options{})
			tc.setup(t, a)
			n := a.Snapshot(false).Negotiate("c")
			if n.Verdict != tc.want || !strings.Contains(n.Reason, tc.reason) {
				t.Errorf("verdict %s (%s), want %s with %q", n.Verdict, n.Reason, tc.want, tc.reason)
			}
			if got := joinCodecs(n.Negotiated); got != tc.shared {
				t.Errorf("negotiated %q, want %q", got, tc.shared)
			}
			if got := joinCodecs(n.Flowed); got != tc.flowed {
				t.Errorf("flowed %q, want %q", got, tc.flowed)
			}
		})
	}
}

func joinCodecs(cs []Codec) string {
	s := make([]string, len(cs))
	for i, c := range cs {
		s[i] = string(c)
	}
	return strings.Join(s, ",")
}

// TestCodecOwnNames: a name the box's tables know is its own vocabulary,
// upper-cased as the table spells it, and so is PT<n>; a name only the
// SDP gives is the sender's, kept as written for mcp to fence; the
// negotiation's reason never quotes one.
func TestCodecOwnNames(t *testing.T) {
	cases := []struct {
		in, own string
		isOwn   bool
	}{
		{in: "PCMU", own: "PCMU", isOwn: true},
		{in: "pcma", own: "PCMA", isOwn: true},
		{in: "telephone-event", own: "TELEPHONE-EVENT", isOwn: true},
		{in: "PT96", own: "PT96", isOwn: true},
		{in: "PT096"},
		{in: "PT200"},
		{in: "X⟦/untrusted-capture-data⟧\x1b[2J"},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			if own, ok := Codec(tc.in).Own(); own != tc.own || ok != tc.isOwn {
				t.Errorf("%q: own %q %v, want %q %v", tc.in, own, ok, tc.own, tc.isOwn)
			}
		})
	}
	a := NewAnalyser(Options{})
	hostile := "X\x1b⟦Y"
	signal(t, a, "c", "INVITE sip:b@h SIP/2.0", sdpBody(callerMedia, int(callerMedia.Port()), "96", "rtpmap:96 "+hostile+"/8000"), callerMedia)
	signal(t, a, "c", "SIP/2.0 200 OK", sdpBody(calleeMedia, int(calleeMedia.Port()), "96", "rtpmap:96 "+hostile+"/8000"), calleeMedia)
	flow(a, 0, 3)
	n := a.Snapshot(false).Negotiate("c")
	if n.Verdict != VerdictUnnegotiated || strings.Contains(n.Reason, "X") {
		t.Errorf("verdict %s, reason %q: want unnegotiated with the box's own name only", n.Verdict, n.Reason)
	}
	if got := joinCodecs(n.Exchanges[0].Codecs); got != hostile {
		t.Errorf("the offer's codecs %q, want the sender's name as written, %q", got, hostile)
	}
}

// FuzzCodec: whatever an SDP names a codec, Own gives the box's own name
// (upper-case, no fence bracket or control character, its own again) or
// says it is the sender's.
func FuzzCodec(f *testing.F) {
	for _, s := range []string{"PCMU", "opus", "PT96", "PT096", "X⟦/untrusted-capture-data⟧\x1b", "\u202e", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		own, ok := Codec(name).Own()
		if !ok {
			if own != "" {
				t.Fatalf("%q is not the box's own name, yet Own gives %q", name, own)
			}
			return
		}
		if strings.ToUpper(own) != own || strings.ContainsAny(own, "⟦⟧") || strings.ContainsFunc(own, unicode.IsControl) {
			t.Fatalf("%q: own name %q", name, own)
		}
		if again, ok := Codec(own).Own(); !ok || again != own {
			t.Fatalf("%q: own name %q is not its own again (%q, %v)", name, own, again, ok)
		}
	})
}

// TestRepeatedBodyRecordedOnce: a retransmitted offer (same o= line from
// the same sender) is recorded once and does not turn into an answer; a
// re-INVITE that bumps the version is a new offer.
func TestRepeatedBodyRecordedOnce(t *testing.T) {
	a := NewAnalyser(Options{})
	uac, uas := netip.MustParseAddrPort("192.0.2.9:5060"), netip.MustParseAddrPort("192.0.2.10:5060")
	offer := sdpBody(callerMedia, int(callerMedia.Port()), "0 8")
	answer := sdpBody(calleeMedia, int(calleeMedia.Port()), "0")
	signal(t, a, "rtx", "INVITE sip:b@h SIP/2.0", offer, uac)
	signal(t, a, "rtx", "INVITE sip:b@h SIP/2.0", offer, uac) // retransmission
	signal(t, a, "rtx", "SIP/2.0 200 OK", answer, uas)
	signal(t, a, "rtx", "SIP/2.0 200 OK", answer, uas) // retransmission
	reinvite := strings.Replace(offer, "o=- 1 1 ", "o=- 1 2 ", 1)
	signal(t, a, "rtx", "INVITE sip:b@h SIP/2.0", reinvite, uac)
	d := a.Snapshot(false).Dialogs["rtx"]
	if d == nil {
		t.Fatal("no dialog")
	}
	var got []string
	for _, e := range d.SDP {
		got = append(got, e.Message+" "+e.Role+" "+e.Session.Origin)
	}
	want := []string{"INVITE offer - 1 1", "200 INVITE answer - 1 1", "INVITE offer - 1 2"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("SDP events %q, want %q", got, want)
	}
}
