package rtp

// SRTP streams against the same call in clear RTP: pion/srtp (an
// independent implementation, test only) encrypts the packets with the
// keys the SDP offers; the figures must match the clear call's and the
// digits must be read after decryption, or said to need keys.

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	pion "github.com/pion/srtp/v3"

	"fieldtap/services/netdecode"
	"fieldtap/services/sdp"
	"fieldtap/services/sip"
)

var (
	srtpCaller = netip.MustParseAddrPort("192.0.2.10:40000")
	srtpCallee = netip.MustParseAddrPort("192.0.2.20:50000")
)

// keyOf is a deterministic 30-byte master key and salt.
func keyOf(seed byte) []byte {
	k := make([]byte, 30)
	for i := range k {
		k[i] = seed + byte(i)*7
	}
	return k
}

func inline(k []byte) string { return base64.StdEncoding.EncodeToString(k) }

// feedSDP sends an INVITE (offer) or a 200 (answer) whose body offers
// media at addr with proto and the extra a= lines.
func feedSDP(t *testing.T, a *Analyser, start string, addr netip.AddrPort, proto string, attrs ...string) {
	t.Helper()
	body := fmt.Sprintf("v=0\r\no=- 1 1 IN IP4 %s\r\ns=-\r\nc=IN IP4 %s\r\nt=0 0\r\nm=audio %d %s 0 101\r\na=rtpmap:101 telephone-event/8000\r\n",
		addr.Addr(), addr.Addr(), addr.Port(), proto)
	for _, at := range attrs {
		body += "a=" + at + "\r\n"
	}
	raw := fmt.Sprintf("%s\r\nVia: SIP/2.0/UDP h;branch=z9hG4bK1\r\nFrom: <sip:a@h>;tag=1\r\nTo: <sip:b@h>\r\nCall-ID: srtp-1\r\nCSeq: 1 INVITE\r\nContent-Type: application/sdp\r\nContent-Length: %d\r\n\r\n%s",
		start, len(body), body)
	var m sip.Parsed
	if err := m.Parse([]byte(raw)); err != nil {
		t.Fatal(err)
	}
	a.SIPMessage(sip.Meta{Time: time.Unix(1000, 0), Src: addr, Dst: addr}, &m)
}

// sendCall sends one direction: 100 PCMU packets with two lost and a
// varying delay, then one RFC 4733 digit (three updates, end sent three
// times), each packet passed through protect.
func sendCall(a *Analyser, src, dst netip.AddrPort, ssrc uint32, digit byte, protect func([]byte) []byte) {
	t0 := time.Unix(1001, 0)
	seq := uint16(65500) // wraps during the call: the ROC moves to 1
	send := func(i int, pt byte, ts uint32, payload []byte, marker bool) {
		p := make([]byte, 12, 12+len(payload))
		p[0], p[1] = 0x80, pt
		if marker {
			p[1] |= 0x80
		}
		binary.BigEndian.PutUint16(p[2:], seq)
		binary.BigEndian.PutUint32(p[4:], ts)
		binary.BigEndian.PutUint32(p[8:], ssrc)
		p = append(p, payload...)
		seq++
		if i == 30 || i == 31 {
			return // lost on the way
		}
		jit := time.Duration(i%5) * 700 * time.Microsecond
		a.Datagram(&netdecode.Datagram{Time: t0.Add(time.Duration(i)*20*time.Millisecond + jit), Src: src, Dst: dst, Payload: protect(p)})
	}
	for i := range 100 {
		send(i, 0, uint32(i*160), make([]byte, 160), false)
	}
	evTS := uint32(100 * 160)
	for j, dur := range []uint16{160, 320, 480, 640, 640, 640} {
		end := byte(0)
		if j >= 3 {
			end = 0x80
		}
		send(100+j, 101, evTS, []byte{digit, end | 10, byte(dur >> 8), byte(dur)}, j == 0)
	}
}

func pionProtect(t *testing.T, key []byte, suite pion.ProtectionProfile) func([]byte) []byte {
	t.Helper()
	c, err := pion.CreateContext(key[:16], key[16:], suite)
	if err != nil {
		t.Fatal(err)
	}
	return func(p []byte) []byte {
		out, err := c.EncryptRTP(nil, p, nil)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
}

func clear(p []byte) []byte { return p }

type srtpCase struct {
	name            string
	proto           string
	offer, answer   []string
	protA, protB    func([]byte) []byte
	keying, payload string
	digits          string
}

func TestSRTPStreams(t *testing.T) {
	kA, kB := keyOf(1), keyOf(100)
	cryptoA := "crypto:1 AES_CM_128_HMAC_SHA1_80 inline:" + inline(kA) + "|2^31"
	cryptoB := "crypto:1 AES_CM_128_HMAC_SHA1_32 inline:" + inline(kB)
	cases := []srtpCase{
		{name: "clear", proto: "RTP/AVP", protA: clear, protB: clear, digits: "5#"},
		{name: "sdes", proto: "RTP/SAVP", offer: []string{"crypto:2 AEAD_AES_128_GCM inline:" + inline(keyOf(9)), cryptoA}, answer: []string{cryptoB},
			protA: pionProtect(t, kA, pion.ProtectionProfileAes128CmHmacSha1_80), protB: pionProtect(t, kB, pion.ProtectionProfileAes128CmHmacSha1_32),
			keying: sdp.KeyingSDES, payload: PayloadDecrypted, digits: "5#"},
		{name: "no key line", proto: "RTP/SAVP",
			protA: pionProtect(t, kA, pion.ProtectionProfileAes128CmHmacSha1_80), protB: pionProtect(t, kB, pion.ProtectionProfileAes128CmHmacSha1_32),
			keying: sdp.KeyingUnknown, payload: PayloadNeedsKeys},
		{name: "dtls", proto: "UDP/TLS/RTP/SAVP", offer: []string{"fingerprint:sha-256 00:11"}, answer: []string{"fingerprint:sha-256 22:33"},
			protA: pionProtect(t, kA, pion.ProtectionProfileAes128CmHmacSha1_80), protB: pionProtect(t, kB, pion.ProtectionProfileAes128CmHmacSha1_32),
			keying: sdp.KeyingDTLS, payload: PayloadNeedsKeys},
		{name: "keys not used", proto: "RTP/SAVP", offer: []string{"crypto:1 AES_CM_128_HMAC_SHA1_80 inline:" + inline(keyOf(50))}, answer: []string{cryptoB},
			protA: pionProtect(t, kA, pion.ProtectionProfileAes128CmHmacSha1_80), protB: pionProtect(t, kB, pion.ProtectionProfileAes128CmHmacSha1_32),
			keying: sdp.KeyingSDES, payload: PayloadKeysFailed, digits: "#"},
		{name: "keys swapped", proto: "RTP/SAVP", offer: []string{cryptoB}, answer: []string{cryptoA},
			protA: pionProtect(t, kA, pion.ProtectionProfileAes128CmHmacSha1_80), protB: pionProtect(t, kB, pion.ProtectionProfileAes128CmHmacSha1_32),
			keying: sdp.KeyingSDES, payload: PayloadDecrypted, digits: "5#"},
	}
	var ref []StreamView
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := NewAnalyser(Options{})
			feedSDP(t, a, "INVITE sip:b@h SIP/2.0", srtpCaller, c.proto, c.offer...)
			feedSDP(t, a, "SIP/2.0 200 OK", srtpCallee, c.proto, c.answer...)
			sendCall(a, srtpCaller, srtpCallee, 0xA1, 5, c.protA)
			sendCall(a, srtpCallee, srtpCaller, 0xB2, 11, c.protB)
			if c.payload == PayloadDecrypted { // one packet changed on the way: counted, not read
				p := c.protA(make([]byte, 12+160))
				p[0], p[1], p[8+3], p[20] = 0x80, 0, 0xA1, p[20]^1
				binary.BigEndian.PutUint16(p[2:], 200)
				a.Datagram(&netdecode.Datagram{Time: time.Unix(1003, 0), Src: srtpCaller, Dst: srtpCallee, Payload: p})
			}
			// An SR to the caller's RTCP port: SRTCP on an SRTP call.
			sr := []byte{0x80, 200, 0, 6, 0, 0, 0, 0xB2, 1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1}
			a.Datagram(&netdecode.Datagram{Time: time.Unix(1004, 0), Src: netip.AddrPortFrom(srtpCallee.Addr(), 50001), Dst: netip.AddrPortFrom(srtpCaller.Addr(), 40001), Payload: sr})
			sn := a.Snapshot(false)
			if srtcp := c.keying != ""; (sn.Stats.SRTCPUnread == 1) != srtcp || (len(sn.Reports) == 0) != srtcp {
				t.Errorf("SRTCP unread %d, reports %d: want the SR parsed on clear RTP only", sn.Stats.SRTCPUnread, len(sn.Reports))
			}
			var digits strings.Builder
			for _, e := range sn.Events {
				digits.WriteString(e.Digit)
			}
			if digits.String() != c.digits {
				t.Errorf("digits %q, want %q", digits.String(), c.digits)
			}
			if len(sn.Streams) != 2 {
				t.Fatalf("%d streams, want 2", len(sn.Streams))
			}
			if c.name == "clear" {
				ref = sn.Streams
			}
			for i, s := range sn.Streams {
				if c.name == "keys not used" && i == 1 { // the answer's key is the callee's own
					c.payload = PayloadDecrypted
				}
				switch {
				case c.keying == "" && s.SRTP != nil:
					t.Errorf("%s: marked SRTP on clear RTP: %+v", s.ID, *s.SRTP)
				case c.keying != "" && (s.SRTP == nil || s.SRTP.Keying != c.keying || s.SRTP.Payload != c.payload):
					t.Errorf("%s: srtp %+v, want keying %s payload %s", s.ID, s.SRTP, c.keying, c.payload)
				case c.payload == PayloadDecrypted && i == 0 && (s.SRTP.Authenticated != 104 || s.SRTP.Unread != 1 || s.SRTP.AuthFailures != 1):
					t.Errorf("%s: %+v, want 104 packets authenticated, the changed one failed and unread", s.ID, *s.SRTP)
				case c.payload == PayloadDecrypted && i == 1 && (s.SRTP.Authenticated != 104 || s.SRTP.Unread != 0 || s.SRTP.AuthFailures != 0):
					t.Errorf("%s: %+v, want 104 packets authenticated, none unread", s.ID, *s.SRTP)
				case c.payload != "" && c.payload != PayloadDecrypted && (s.SRTP.Unread != 104 || s.SRTP.EventsUnread != 6 || s.SRTP.Reason == ""):
					t.Errorf("%s: %+v, want 104 packets unread, 6 events, a reason", s.ID, *s.SRTP)
				}
				if ref == nil || c.payload == PayloadDecrypted && i == 0 {
					continue // the changed packet is one more packet
				}
				r := ref[i]
				if s.Packets != r.Packets || s.Lost != r.Lost || s.Expected != r.Expected || s.MaxJitterMs != r.MaxJitterMs ||
					s.MeanJitterMs != r.MeanJitterMs || s.MaxDeltaMs != r.MaxDeltaMs || fmt.Sprint(fmtMOS(s.MOS)) != fmt.Sprint(fmtMOS(r.MOS)) {
					t.Errorf("%s: packets %d lost %d/%d jitter %.4f/%.4f delta %.3f MOS %v; clear RTP %d %d/%d %.4f/%.4f %.3f %v",
						s.ID, s.Packets, s.Lost, s.Expected, s.MaxJitterMs, s.MeanJitterMs, s.MaxDeltaMs, fmtMOS(s.MOS),
						r.Packets, r.Lost, r.Expected, r.MaxJitterMs, r.MeanJitterMs, r.MaxDeltaMs, fmtMOS(r.MOS))
				}
			}
			if c.name == "sdes" {
				t.Logf("%s: packets %d lost %d max jitter %.3f ms MOS %v srtp %+v", sn.Streams[0].ID, sn.Streams[0].Packets, sn.Streams[0].Lost,
					sn.Streams[0].MaxJitterMs, fmtMOS(sn.Streams[0].MOS), *sn.Streams[0].SRTP)
			}
		})
	}
}

// TestSRTPRekey: a re-INVITE with a new a=crypto key rekeys the caller's
// stream mid-call; the digit sent under the new key is read.
func TestSRTPRekey(t *testing.T) {
	kA, kC := keyOf(1), keyOf(70)
	a := NewAnalyser(Options{})
	feedSDP(t, a, "INVITE sip:b@h SIP/2.0", srtpCaller, "RTP/SAVP", "crypto:1 AES_CM_128_HMAC_SHA1_80 inline:"+inline(kA))
	feedSDP(t, a, "SIP/2.0 200 OK", srtpCallee, "RTP/SAVP", "crypto:1 AES_CM_128_HMAC_SHA1_80 inline:"+inline(keyOf(9)))
	oldKey, newKey := pionProtect(t, kA, pion.ProtectionProfileAes128CmHmacSha1_80), pionProtect(t, kC, pion.ProtectionProfileAes128CmHmacSha1_80)
	n := 0
	rekeyed := false
	sendCall(a, srtpCaller, srtpCallee, 0xA1, 3, func(p []byte) []byte {
		if n++; n == 51 { // the re-INVITE, a new session version, before packet 51
			rekeyed = true
			body := fmt.Sprintf("v=0\r\no=- 1 2 IN IP4 %s\r\ns=-\r\nc=IN IP4 %s\r\nt=0 0\r\nm=audio %d RTP/SAVP 0 101\r\na=rtpmap:101 telephone-event/8000\r\na=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:%s\r\n",
				srtpCaller.Addr(), srtpCaller.Addr(), srtpCaller.Port(), inline(kC))
			raw := fmt.Sprintf("INVITE sip:b@h SIP/2.0\r\nVia: SIP/2.0/UDP h;branch=z9hG4bK2\r\nFrom: <sip:a@h>;tag=1\r\nTo: <sip:b@h>;tag=2\r\nCall-ID: srtp-1\r\nCSeq: 2 INVITE\r\nContent-Type: application/sdp\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
			var m sip.Parsed
			if err := m.Parse([]byte(raw)); err != nil {
				t.Fatal(err)
			}
			a.SIPMessage(sip.Meta{Time: time.Unix(1002, 0), Src: srtpCaller, Dst: srtpCallee}, &m)
		}
		if rekeyed {
			return newKey(p)
		}
		return oldKey(p)
	})
	sn := a.Snapshot(false)
	if len(sn.Events) != 1 || sn.Events[0].Digit != "3" {
		t.Errorf("events %+v, want the digit 3 sent under the new key", sn.Events)
	}
	s := sn.Streams[0]
	if s.SRTP == nil || s.SRTP.Payload != PayloadDecrypted || s.SRTP.Authenticated != 104 || s.SRTP.Unread != 0 {
		t.Errorf("srtp %+v, want every packet authenticated across the rekey", s.SRTP)
	}
}

// TestSRTPAfterItsDialogIsEvicted: the dialogs' table evicts a call's
// dialog (its SDP and a=crypto keys) while its SRTP flows. A stream
// keyed before keeps its key, through a packet that fails to
// authenticate (no new body can rekey it now); a stream first seen after
// cannot be keyed, and says why.
func TestSRTPAfterItsDialogIsEvicted(t *testing.T) {
	kA := keyOf(1)
	a := NewAnalyser(Options{MaxDialogs: 1})
	feedSDP(t, a, "INVITE sip:b@h SIP/2.0", srtpCaller, "RTP/SAVP", "crypto:1 AES_CM_128_HMAC_SHA1_80 inline:"+inline(kA))
	feedSDP(t, a, "SIP/2.0 200 OK", srtpCallee, "RTP/SAVP", "crypto:1 AES_CM_128_HMAC_SHA1_80 inline:"+inline(keyOf(9)))
	evict := func() {
		other := sdpMessage(t, "other-call", 1, false, 30000)
		a.SIPMessage(sip.Meta{Time: time.Unix(1001, 0), Src: netip.MustParseAddrPort("192.0.2.1:5060")}, &other)
		if a.st.DialogsEvicted == 0 {
			t.Fatal("the call's dialog was not evicted")
		}
	}
	protect := pionProtect(t, kA, pion.ProtectionProfileAes128CmHmacSha1_80)
	n := 0
	sendCall(a, srtpCaller, srtpCallee, 0xA1, 5, func(p []byte) []byte {
		n++
		if n == 40 {
			evict()
		}
		out := protect(p)
		if n == 60 {
			out[len(out)-1] ^= 0xff // its tag no longer authenticates
		}
		return out
	})
	sn := a.Snapshot(false)
	if len(sn.Streams) != 1 {
		t.Fatalf("%d streams", len(sn.Streams))
	}
	if s := sn.Streams[0].SRTP; s == nil || s.Payload != PayloadDecrypted || s.Authenticated != 103 || s.AuthFailures != 1 {
		t.Errorf("srtp %+v, want every packet but the damaged one authenticated after the dialog went", s)
	}
	if len(sn.Events) != 1 || sn.Events[0].Digit != "5" {
		t.Errorf("events %+v, want the digit 5 decrypted after the dialog went", sn.Events)
	}
	// The callee's stream starts only now: its call's keys are gone.
	sendCall(a, srtpCallee, srtpCaller, 0xB2, 6, pionProtect(t, keyOf(9), pion.ProtectionProfileAes128CmHmacSha1_80))
	for _, s := range a.Snapshot(false).Streams {
		if s.SSRC == "000000B2" {
			if s.SRTP == nil || s.SRTP.Payload != PayloadNeedsKeys || !strings.Contains(s.SRTP.Reason, "evicted") {
				t.Errorf("late stream's srtp %+v, want needs_keys saying the keys were evicted", s.SRTP)
			}
			return
		}
	}
	t.Error("no stream from the callee")
}
