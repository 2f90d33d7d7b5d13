package mcp

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gopacket/gopacket/layers"

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
func audioDeps(t *testing.T, file string, rewrite func([]byte) []byte, keep func(media *rtp.Analyser, link layers.LinkType, b []byte) int) Deps {
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
	h := newHarness(t, audioDeps(t, "RTP-Protocol.pcap", nil, func(media *rtp.Analyser, link layers.LinkType, b []byte) int {
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
