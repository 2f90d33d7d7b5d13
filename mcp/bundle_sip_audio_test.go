package mcp

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"fieldtap/drivers/wire"

	"fieldtap/drivers/pcapfile"
	"fieldtap/services/framestore"
	"fieldtap/services/netdecode"
	"fieldtap/services/ring"
	"fieldtap/services/rtp"
	"fieldtap/services/sip"
	"fieldtap/tools/refdata"
)

// rtpProtocolCall is RTP-Protocol.pcap's one call: PCMA both ways, comfort
// noise, SSRCs 06C156FD and 44C61AFB.
const rtpProtocolCall = "1907983263271201083544@10.33.6.101"

// audioDeps loads a reference capture as exportDeps does, with the frames
// changed on the way: rewrite changes what both the analysers and the
// frame ring see; keep, when set, says how many bytes of each (rewritten)
// frame the ring keeps, as the recorder's rtp_headers_only would.
func audioDeps(t *testing.T, file string, rewrite func([]byte) []byte, keep func(media *rtp.Analyser, link wire.LinkType, b []byte) int) Deps {
	t.Helper()
	st, _ := sip.New(sip.Limits{})
	an := sip.NewAnalyser(st, netdecode.Options{})
	media := rtp.NewAnalyser(rtp.Options{})
	an.SetMediaHook(media)
	fs, err := framestore.New(ring.Limits{Items: 10_000, Bytes: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	ex := sip.NewExporter(t.TempDir(), netdecode.Options{})
	ex.AddPort("span0", fs)
	refdata.EachRecord(t, filepath.Join(refdata.Dir(t, "sip"), file), func(rec pcapfile.Record) {
		b := bytes.Clone(rec.Data)
		if rewrite != nil {
			b = rewrite(b)
		}
		an.Feed(rec.Time, rec.Link, b)
		n := len(b)
		if keep != nil {
			n = keep(media, rec.Link, b)
		}
		if _, err := fs.Append(framestore.Record{Time: rec.Time, Link: rec.Link, Data: b[:n], OrigLen: len(b)}); err != nil {
			t.Fatal(err)
		}
	})
	d := testDeps()
	d.SIP, d.Media, d.MediaInterval, d.SIPExport = st, media, rtp.DefaultInterval, ex
	return d
}

func TestExportAudioArguments(t *testing.T) {
	h := newHarness(t, audioDeps(t, "RTP-Protocol.pcap", nil, nil))
	h.fails("export_audio", map[string]any{"call_id": "nope"}, CodeNotFound)
	h.fails("export_audio", map[string]any{"call_id": rtpProtocolCall, "ssrc": "xyz"}, CodeInvalidArgument)
	h.fails("export_audio", map[string]any{"call_id": rtpProtocolCall, "ssrc": "DEADBEEF"}, CodeNotFound)
	h.fails("export_audio", map[string]any{"call_id": rtpProtocolCall, "max_seconds": 0}, CodeInvalidArgument)

	// One stream by SSRC: its file, no mix, and why not.
	out := data(h.ok("export_audio", map[string]any{"call_id": rtpProtocolCall, "ssrc": "0x06c156fd"}))
	streams := out["streams"].([]any)
	if len(streams) != 1 || out["mixed"] != nil || out["mixed_why"] == "" {
		t.Fatalf("one SSRC: %d streams, mixed %v (%v)", len(streams), out["mixed"], out["mixed_why"])
	}
	s := streams[0].(map[string]any)
	if s["ssrc"] != "06C156FD" || s["codec"] != "PCMA" || s["packets"] != 201.0 || s["cut"] != false {
		t.Errorf("stream %v", s)
	}

	// max_seconds cuts every file and says so.
	env := h.ok("export_audio", map[string]any{"call_id": rtpProtocolCall, "max_seconds": 1})
	out = data(env)
	for _, r := range out["streams"].([]any) {
		s := r.(map[string]any)
		if s["cut"] != true || s["cut_at_s"] != 1.0 || s["file"].(map[string]any)["duration_s"] != 1.0 {
			t.Errorf("max_seconds 1: stream %v %v %v", s["cut"], s["cut_at_s"], s["file"])
		}
	}
	if w := strings.Join(anyStrings(env["warnings"]), " "); !strings.Contains(w, "max_seconds (1) cut") {
		t.Errorf("no warning of the cut: %q", w)
	}
}

func anyStrings(v any) []string {
	var out []string
	for _, s := range v.([]any) {
		out = append(out, s.(string))
	}
	return out
}

// Recorded headers only: the ring keeps of each RTP frame what the
// recorder's rtp_headers_only keeps; the call is refused, naming it.
func TestExportAudioRefusesHeadersOnly(t *testing.T) {
	h := newHarness(t, audioDeps(t, "RTP-Protocol.pcap", nil, func(media *rtp.Analyser, link wire.LinkType, b []byte) int {
		return media.HeadersOnly(link, b)
	}))
	msg := h.fails("export_audio", map[string]any{"call_id": rtpProtocolCall}, CodeUnavailable)
	if !strings.Contains(msg, "rtp_headers_only") || !strings.Contains(msg, "payload not kept") {
		t.Errorf("refusal %q does not say the payload was recorded headers only", msg)
	}
}

// SRTP by the SDP: an a=crypto line (written over a=sendrecv, same
// length) on both sides makes both streams SRTP; the call is refused.
func TestExportAudioRefusesSRTP(t *testing.T) {
	h := newHarness(t, audioDeps(t, "RTP-Protocol.pcap", func(b []byte) []byte {
		return bytes.ReplaceAll(b, []byte("a=sendrecv"), []byte("a=crypto:1"))
	}, nil))
	msg := h.fails("export_audio", map[string]any{"call_id": rtpProtocolCall}, CodeUnavailable)
	if !strings.Contains(msg, "SRTP") || strings.Count(msg, "a=crypto") != 2 {
		t.Errorf("refusal %q does not name SRTP for both streams", msg)
	}
}

// An unsupported codec is named: every PCMA packet's payload type
// rewritten to 18 (G729, a static type the box names).
func TestExportAudioNamesUnsupportedCodec(t *testing.T) {
	h := newHarness(t, audioDeps(t, "RTP-Protocol.pcap", func(b []byte) []byte {
		// Ethernet 14 + IPv4 20 + UDP 8: the RTP header's second byte.
		const pt = 14 + 20 + 8 + 1
		if len(b) > pt+11 && b[pt-1] == 0x80 && b[pt]&0x7F == 8 && b[23] == 17 {
			b[pt] = b[pt]&0x80 | 18
		}
		return b
	}, nil))
	msg := h.fails("export_audio", map[string]any{"call_id": rtpProtocolCall}, CodeUnavailable)
	if !strings.Contains(msg, "unsupported codec G729") {
		t.Errorf("refusal %q does not name G729", msg)
	}
}

// gen-sipp-hold-resume-rfc2833-udp.pcapng: PCMA both ways, a hold, and
// one RFC 2833 digit on an SSRC of its own (tshark: event 1, 10 packets
// on 0x0E05384E). The digit is listed as dtmf_events lists it, the
// events-only stream is skipped with its reason, and a pause its sender's
// timestamps do not show is not made up.
func TestExportAudioListsDTMFAndPauses(t *testing.T) {
	h := newHarness(t, audioDeps(t, "gen-sipp-hold-resume-rfc2833-udp.pcapng", nil, nil))
	const call = "1-4124@127.0.0.1"
	env := h.ok("export_audio", map[string]any{"call_id": call})
	out := data(env)
	want := items(h.ok("dtmf_events", map[string]any{"call_id": call}))
	got := out["dtmf"].([]any)
	if len(want) != 1 || len(got) != 1 || got[0].(map[string]any)["digit"] != "1" || got[0].(map[string]any)["stream_id"] != want[0]["stream_id"] {
		t.Fatalf("dtmf %v, dtmf_events %v; want the one digit 1", got, want)
	}
	skipped := out["skipped"].([]any)
	if len(skipped) != 1 || !strings.Contains(skipped[0].(map[string]any)["reason"].(string), "DTMF events") {
		t.Errorf("skipped %v, want the events-only stream", skipped)
	}
	if len(out["streams"].([]any)) != 2 || out["mixed"] == nil {
		t.Fatalf("%d streams, mixed %v", len(out["streams"].([]any)), out["mixed"])
	}
	// The hold: 6100's sender stopped for 2.04 s but its timestamps went
	// on by one packet (tshark: seq 59232 ts 24000 at 3.277 s, seq 59233
	// ts 24240 at 5.315 s). Placed by timestamp, there is no gap there,
	// and its file is as long as its timestamps say.
	for _, r := range out["streams"].([]any) {
		s := r.(map[string]any)
		if strings.HasPrefix(s["stream_id"].(string), "127.0.0.1:6100>") && s["silence_s"] != 0.0 {
			t.Errorf("stream %s: %v s of silence; its timestamps have no gap", s["stream_id"], s["silence_s"])
		}
	}
}
