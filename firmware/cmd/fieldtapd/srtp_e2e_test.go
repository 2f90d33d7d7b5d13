package main

// SRTP end to end: a capture of two SRTP calls whose packets pion/srtp
// (an independent implementation, a test-only dependency) encrypted, read
// by fieldtapd from the file; tshark's RTP analysis of the same file is
// the reference for loss and jitter (SRTP headers are clear).

import (
	"bytes"
	"encoding/base64"
	be "encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
	pion "github.com/pion/srtp/v3"
)

// srtpLeg is one direction of a generated call.
type srtpLeg struct {
	src, dst netip.AddrPort
	ssrc     uint32
	seq0     uint16
	enc      *pion.Context     // nil: clear RTP
	digits   string            // sent as RFC 4733 events, one per second
	lost     map[int]bool      // packet numbers dropped before the capture point
	late     func(int) float64 // extra delay in ms of packet i
}

// srtpCallFile writes an INVITE and 200 OK of callID with the SDP given
// per side, then both legs' 10 s of PCMU (with their digits) encrypted by
// pion, then the BYE.
func srtpCallFile(t *testing.T, w *pcapgo.Writer, t0 time.Time, callID, proto string, offerAttrs, answerAttrs []string, a, b srtpLeg) {
	t.Helper()
	write := func(at time.Time, src, dst netip.AddrPort, payload []byte) {
		f := srtpUDPFrame(t, src, dst, payload)
		if err := w.WritePacket(gopacket.CaptureInfo{Timestamp: at, CaptureLength: len(f), Length: len(f)}, f); err != nil {
			t.Fatal(err)
		}
	}
	sip := func(l srtpLeg, start, tag string, attrs []string) []byte {
		body := fmt.Sprintf("v=0\r\no=- 7 7 IN IP4 %s\r\ns=-\r\nc=IN IP4 %s\r\nt=0 0\r\nm=audio %d %s 0 101\r\na=rtpmap:0 PCMU/8000\r\na=rtpmap:101 telephone-event/8000\r\na=fmtp:101 0-15\r\n",
			l.src.Addr(), l.src.Addr(), l.src.Port(), proto)
		for _, at := range attrs {
			body += "a=" + at + "\r\n"
		}
		return []byte(start + "\r\nVia: SIP/2.0/UDP " + a.src.Addr().String() + ":5060;branch=z9hG4bK" + callID + "\r\nFrom: <sip:alice@example.com>;tag=a1\r\nTo: <sip:bob@example.com>" + tag +
			"\r\nCall-ID: " + callID + "\r\nCSeq: 1 INVITE\r\nContact: <sip:x@" + l.src.Addr().String() + ">\r\nContent-Type: application/sdp\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body)
	}
	sipA, sipB := netip.AddrPortFrom(a.src.Addr(), 5060), netip.AddrPortFrom(b.src.Addr(), 5060)
	write(t0, sipA, sipB, sip(a, "INVITE sip:bob@example.com SIP/2.0", "", offerAttrs))
	write(t0.Add(100*time.Millisecond), sipB, sipA, sip(b, "SIP/2.0 200 OK", ";tag=b1", answerAttrs))
	start := t0.Add(200 * time.Millisecond)
	const packets = 500 // 10 s at 20 ms
	for _, l := range []srtpLeg{a, b} {
		seq, ts := l.seq0, uint32(1000)
		digit := 0
		for i := range packets {
			at := start.Add(time.Duration(i)*20*time.Millisecond + time.Duration(l.late(i)*float64(time.Millisecond)))
			send := func(pt uint8, marker bool, tsv uint32, payload []byte) {
				p := make([]byte, 12, 12+len(payload))
				p[0], p[1] = 0x80, pt
				if marker {
					p[1] |= 0x80
				}
				be.BigEndian.PutUint16(p[2:], seq)
				be.BigEndian.PutUint32(p[4:], tsv)
				be.BigEndian.PutUint32(p[8:], l.ssrc)
				p = append(p, payload...)
				seq++
				if l.lost[i] {
					return
				}
				if l.enc != nil {
					var err error
					if p, err = l.enc.EncryptRTP(nil, p, nil); err != nil {
						t.Fatal(err)
					}
				}
				write(at, l.src, l.dst, p)
			}
			// A digit every second from the second second: six event
			// packets in place of six audio packets (the clock runs on).
			if k := i - 50*(digit+1); digit < len(l.digits) && k >= 0 && k < 6 {
				code := strings.IndexByte("0123456789*#", l.digits[digit])
				evTS := ts - uint32(k)*160
				dur, flags := uint16(160*(k+1)), byte(10)
				if k >= 3 {
					dur, flags = 480, 0x80|10
				}
				send(101, k == 0, evTS, []byte{byte(code), flags, byte(dur >> 8), byte(dur)})
				if k == 5 {
					digit++
				}
			} else {
				send(0, false, ts, bytes.Repeat([]byte{0xFF}, 160))
			}
			ts += 160
		}
	}
	bye := "BYE sip:bob@example.com SIP/2.0\r\nVia: SIP/2.0/UDP " + a.src.Addr().String() + ":5060;branch=z9hG4bKbye" + callID +
		"\r\nFrom: <sip:alice@example.com>;tag=a1\r\nTo: <sip:bob@example.com>;tag=b1\r\nCall-ID: " + callID + "\r\nCSeq: 2 BYE\r\nContent-Length: 0\r\n\r\n"
	write(start.Add(packets*20*time.Millisecond+time.Second), sipA, sipB, []byte(bye))
}

func srtpUDPFrame(t *testing.T, src, dst netip.AddrPort, payload []byte) []byte {
	t.Helper()
	eth := &layers.Ethernet{SrcMAC: net.HardwareAddr{2, 0, 0, 0, 0, 1}, DstMAC: net.HardwareAddr{2, 0, 0, 0, 0, 2}, EthernetType: layers.EthernetTypeIPv4}
	ip := &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolUDP, SrcIP: src.Addr().AsSlice(), DstIP: dst.Addr().AsSlice()}
	udp := &layers.UDP{SrcPort: layers.UDPPort(src.Port()), DstPort: layers.UDPPort(dst.Port())}
	if err := udp.SetNetworkLayerForChecksum(ip); err != nil {
		t.Fatal(err)
	}
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, eth, ip, udp, gopacket.Payload(payload)); err != nil {
		t.Fatal(err)
	}
	return bytes.Clone(buf.Bytes())
}

func pionSender(t *testing.T, master []byte, profile pion.ProtectionProfile) *pion.Context {
	t.Helper()
	c, err := pion.CreateContext(master[:16], master[16:], profile)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// tsharkSRTPStreams is tshark's RTP analysis of path by SSRC: packets,
// lost and max jitter (ms). nil when tshark is not installed.
func tsharkSRTPStreams(t *testing.T, path string) map[string][3]float64 {
	t.Helper()
	if _, err := exec.LookPath("tshark"); err != nil {
		return nil
	}
	out, err := exec.Command("tshark", "-n", "-q", "-r", path, "-z", "rtp,streams").Output()
	if err != nil {
		t.Fatalf("tshark: %v", err)
	}
	rows := map[string][3]float64{}
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		if len(f) < 12 || !strings.HasPrefix(f[6], "0x") {
			continue
		}
		if f[len(f)-1] == "X" {
			f = f[:len(f)-1]
		}
		// … Pkts, Lost, (pct), Min/Mean/Max Delta, Min/Mean/Max Jitter
		pk, _ := strconv.ParseFloat(f[len(f)-9], 64)
		lost, _ := strconv.ParseFloat(f[len(f)-8], 64)
		j, _ := strconv.ParseFloat(f[len(f)-1], 64)
		rows[strings.ToUpper(strings.TrimPrefix(f[6], "0x"))] = [3]float64{pk, lost, j}
	}
	t.Logf("tshark rtp,streams:\n%s", out)
	return rows
}

func TestSRTPEndToEnd(t *testing.T) {
	masterA, masterB := make([]byte, 30), make([]byte, 30)
	for i := range masterA {
		masterA[i], masterB[i] = byte(3*i+1), byte(200-5*i)
	}
	keyA, keyB := base64.StdEncoding.EncodeToString(masterA), base64.StdEncoding.EncodeToString(masterB)
	// The same two calls twice: SRTP, and a clear twin (RTP/AVP, the
	// packets unencrypted) whose figures the SRTP ones must equal.
	write := func(name string, encrypt bool) string {
		path := filepath.Join(t.TempDir(), name)
		var buf bytes.Buffer
		w := pcapgo.NewWriter(&buf)
		if err := w.WriteFileHeader(65535, layers.LinkTypeEthernet); err != nil {
			t.Fatal(err)
		}
		proto, offer, answer := "RTP/AVP", []string(nil), []string(nil)
		sender := func([]byte, pion.ProtectionProfile) *pion.Context { return nil }
		if encrypt {
			proto = "RTP/SAVP"
			offer, answer = []string{"crypto:1 AES_CM_128_HMAC_SHA1_80 inline:" + keyA + "|2^31"}, []string{"crypto:1 AES_CM_128_HMAC_SHA1_32 inline:" + keyB}
			sender = func(m []byte, p pion.ProtectionProfile) *pion.Context { return pionSender(t, m, p) }
		}
		t0 := time.Date(2026, 12, 5, 9, 0, 0, 0, time.UTC)
		jitter := func(i int) float64 { return float64(i%7) * 0.9 }
		steady := func(int) float64 { return 0 }
		caller, callee := netip.MustParseAddrPort("192.0.2.10:40000"), netip.MustParseAddrPort("198.51.100.20:50000")
		// Call 1: SDES keys in the SDP; the caller's leg loses 3 packets,
		// wraps its sequence (ROC 0 → 1) and sends 1, 2, #; the callee 9.
		srtpCallFile(t, w, t0, "sdes-call", proto, offer, answer,
			srtpLeg{src: caller, dst: callee, ssrc: 0x1111AAAA, seq0: 65400, enc: sender(masterA, pion.ProtectionProfileAes128CmHmacSha1_80),
				digits: "12#", lost: map[int]bool{100: true, 101: true, 300: true}, late: jitter},
			srtpLeg{src: callee, dst: caller, ssrc: 0x2222BBBB, seq0: 10, enc: sender(masterB, pion.ProtectionProfileAes128CmHmacSha1_32),
				digits: "9", late: steady})
		// Call 2: RTP/SAVP with no key line: the box cannot read its digit.
		c2a, c2b := netip.MustParseAddrPort("192.0.2.11:42000"), netip.MustParseAddrPort("198.51.100.21:52000")
		srtpCallFile(t, w, t0.Add(20*time.Second), "nokey-call", proto, nil, nil,
			srtpLeg{src: c2a, dst: c2b, ssrc: 0x3333CCCC, seq0: 1, enc: sender(masterA, pion.ProtectionProfileAes128CmHmacSha1_80),
				digits: "4", late: jitter},
			srtpLeg{src: c2b, dst: c2a, ssrc: 0x4444DDDD, seq0: 1, enc: sender(masterB, pion.ProtectionProfileAes128CmHmacSha1_80), late: steady})
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	path, clearPath := write("srtp.pcap", true), write("clear.pcap", false)

	twin := startContract(t, "--board", "none", "--source", clearPath, "--mcp-bundles", "server,sip,media,sip_site")
	twin.waitExhausted()
	env, _ := twin.call("rtp_streams", map[string]any{})
	clearRows := map[string]map[string]any{}
	for _, it := range env["items"].([]any) {
		s := it.(map[string]any)
		clearRows[s["ssrc"].(string)] = s
	}
	env, _ = twin.call("dtmf_events", map[string]any{})
	var clearDigits []string
	for _, it := range env["items"].([]any) {
		e := it.(map[string]any)
		clearDigits = append(clearDigits, e["call_id"].(string)+":"+e["digit"].(string))
	}

	clearWAVs := exportedWAVs(t, twin, "sdes-call", false)

	cc := startContract(t, "--board", "none", "--source", path, "--mcp-bundles", "server,sip,media,sip_site")
	cc.waitExhausted()
	env, _ = cc.call("rtp_streams", map[string]any{})
	items, _ := env["items"].([]any)
	if len(items) != 4 {
		t.Fatalf("%d streams, want 4: %v", len(items), env)
	}
	truth, clearTruth := tsharkSRTPStreams(t, path), tsharkSRTPStreams(t, clearPath)
	if truth == nil {
		t.Log("tshark not installed: loss is checked against the generator's drops only, jitter not against a reference")
	}
	want := map[string]struct {
		payload string
		lost    float64
		unread  float64
	}{
		"1111AAAA": {"decrypted", 3, 0}, "2222BBBB": {"decrypted", 0, 0},
		"3333CCCC": {"needs_keys", 0, 6}, "4444DDDD": {"needs_keys", 0, 0},
	}
	for _, it := range items {
		s := it.(map[string]any)
		ssrc := s["ssrc"].(string)
		w, ok := want[ssrc]
		if !ok {
			t.Errorf("unexpected stream %v", s["stream_id"])
			continue
		}
		sr, _ := s["srtp"].(map[string]any)
		if sr == nil || sr["payload"] != w.payload || sr["events_unread"].(float64) != w.unread {
			t.Errorf("%s: srtp %v, want payload %s with %v event packets unread", ssrc, sr, w.payload, w.unread)
			continue
		}
		wantKeying := "sdes"
		if w.payload == "needs_keys" {
			wantKeying = "unknown"
		}
		if sr["keying"] != wantKeying || sr["auth_failures"].(float64) != 0 {
			t.Errorf("%s: srtp %v, want keying %s, no auth failures", ssrc, sr, wantKeying)
		}
		if s["lost"].(float64) != w.lost {
			t.Errorf("%s: lost %v, the generator dropped %v", ssrc, s["lost"], w.lost)
		}
		if s["mos"] == nil {
			t.Errorf("%s: no MOS for a PCMU stream: %v", ssrc, s["mos_reason"])
		}
		if tr, ok := truth[ssrc]; truth != nil {
			if !ok {
				t.Errorf("%s: tshark found no such stream", ssrc)
				continue
			}
			if s["packets"].(float64) != tr[0] || s["lost"].(float64) != tr[1] {
				t.Errorf("%s: packets %v lost %v; tshark %v %v", ssrc, s["packets"], s["lost"], tr[0], tr[1])
			}
			if ct := clearTruth[ssrc]; ct != tr {
				t.Errorf("%s: tshark's SRTP figures %v differ from its clear twin's %v", ssrc, tr, ct)
			}
		}
		// The headers are the same in clear: so must every figure be.
		c := clearRows[ssrc]
		for _, k := range []string{"packets", "expected", "lost", "duplicates", "out_of_order", "max_jitter_ms", "mean_jitter_ms", "max_delta_ms", "mos", "r_factor", "codec", "payload_types"} {
			if fmt.Sprint(s[k]) != fmt.Sprint(c[k]) {
				t.Errorf("%s: %s %v, the clear twin's %v", ssrc, k, s[k], c[k])
			}
		}
		if c["srtp"] != nil {
			t.Errorf("%s: the clear twin's stream is marked SRTP: %v", ssrc, c["srtp"])
		}
		t.Logf("%s: packets %v lost %v max jitter %.3f ms MOS %v srtp %v", ssrc, s["packets"], s["lost"], s["max_jitter_ms"], s["mos"], sr)
	}

	env, _ = cc.call("dtmf_events", map[string]any{})
	var got []string
	for _, it := range env["items"].([]any) {
		e := it.(map[string]any)
		got = append(got, e["call_id"].(string)+":"+e["digit"].(string))
	}
	// The clear twin's digits less the keyless call's.
	var keyed []string
	for _, d := range clearDigits {
		if strings.HasPrefix(d, "sdes-call:") {
			keyed = append(keyed, d)
		}
	}
	if strings.Join(got, " ") != strings.Join(keyed, " ") || len(keyed) != 4 || len(clearDigits) != 5 {
		t.Errorf("digits %q, want the clear twin's %q less nokey-call's (1 2 # 9 and 4)", got, clearDigits)
	}
	if !strings.Contains(fmt.Sprint(env["warnings"]), "1 SRTP streams carried 6 RFC 4733 event packets whose payload needs keys") {
		t.Errorf("dtmf_events does not say the keyless call's digits need keys: %v", env["warnings"])
	}
	if env, _ := cc.call("dtmf_events", map[string]any{"call_id": "sdes-call"}); env["warnings"] != nil && strings.Contains(fmt.Sprint(env["warnings"]), "needs keys") {
		t.Errorf("dtmf_events of the keyed call warns of another call's keys: %v", env["warnings"])
	}

	// export_audio decrypts the keyed call with the SDES keys its SDP
	// offered: every file is byte for byte the clear twin's; the keyless
	// call is refused with the reason.
	wavs := exportedWAVs(t, cc, "sdes-call", true)
	if len(wavs) != 3 || len(clearWAVs) != 3 {
		t.Errorf("export_audio wrote %d files of the SRTP call, %d of its clear twin; want 2 streams and the mix each", len(wavs), len(clearWAVs))
	}
	for name, b := range clearWAVs {
		if !bytes.Equal(wavs[name], b) {
			t.Errorf("export_audio %s: %d bytes from SRTP differ from the clear twin's %d", name, len(wavs[name]), len(b))
		}
	}
	if env, _ := cc.call("export_audio", map[string]any{"call_id": "nokey-call"}); env["ok"] != false || !strings.Contains(fmt.Sprint(env["errors"]), "SRTP without keys") {
		t.Errorf("export_audio of the keyless SRTP call: %v", env)
	}

	env, blocks := cc.call("get_message", map[string]any{"call_id": "sdes-call", "index": 0})
	data := env["data"].(map[string]any)
	for _, k := range []string{keyA, keyA[:20], keyB} {
		for _, b := range blocks {
			if strings.Contains(b, k) {
				t.Fatalf("get_message shows the SDES key")
			}
		}
	}
	if data["keys_redacted"].(float64) != 1 || !strings.Contains(data["body"].(string), "inline:REDACTED|2^31") {
		t.Errorf("get_message body %q, keys_redacted %v: want the key masked and counted", data["body"], data["keys_redacted"])
	}
	env, blocks = cc.call("search_messages", map[string]any{"query": "inline:"})
	if n := len(env["items"].([]any)); n != 2 || strings.Contains(strings.Join(blocks, ""), keyA) || strings.Contains(strings.Join(blocks, ""), keyB) {
		t.Errorf("search_messages: %d hits (want 2: offer and answer), keys shown: %v", n, strings.Contains(strings.Join(blocks, ""), keyA))
	}
	if env, _ := cc.call("search_messages", map[string]any{"query": "inline:" + keyA[:4]}); len(env["items"].([]any)) != 0 {
		t.Error("search_messages matched key material: a pattern can probe the key")
	}
}

// exportedWAVs calls export_audio for callID and reads back each file it
// wrote, by stream SSRC ("mixed" for the mix), and checks each stream
// was decrypted exactly when the call is SRTP.
func exportedWAVs(t *testing.T, cc *contractClient, callID string, srtp bool) map[string][]byte {
	t.Helper()
	env, _ := cc.call("export_audio", map[string]any{"call_id": callID})
	data, _ := env["data"].(map[string]any)
	if data == nil {
		t.Fatalf("export_audio %s: %v", callID, env)
	}
	out := map[string][]byte{}
	read := func(name string, f map[string]any) {
		b, err := os.ReadFile(f["path"].(string))
		if err != nil {
			t.Fatal(err)
		}
		out[name] = b
	}
	for _, it := range data["streams"].([]any) {
		s := it.(map[string]any)
		if s["srtp"] != srtp || s["srtp_auth_failed"].(float64) != 0 {
			t.Errorf("%s: srtp %v with %v packets failing authentication, want srtp %v and none", s["ssrc"], s["srtp"], s["srtp_auth_failed"], srtp)
		}
		read(s["ssrc"].(string), s["file"].(map[string]any))
	}
	if m, ok := data["mixed"].(map[string]any); ok {
		read("mixed", m)
	}
	return out
}
