package mcp

import (
	"errors"
	"fmt"
	"net/netip"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"fieldtap/services/audio"
	"fieldtap/services/audio/wav"
	"fieldtap/services/rtp"
	"fieldtap/services/sdp"
	"fieldtap/services/sip"
	"fieldtap/services/srtp"
)

// Bounds of export_audio. Rendering holds every sample in memory before
// the file is written, so one export is capped in time: 30 minutes of
// G.722 is 58 MB a direction.
const (
	audioDefaultSeconds = 600
	audioMaxSeconds     = 1800
	// audioMaxDatagrams bounds the datagrams read for one export: 30
	// minutes of 20 ms packets in both directions, twice over for relay
	// legs and SSRC changes.
	audioMaxDatagrams = 4 * audioMaxSeconds * 50
	// audioMaxDTMF bounds the listed digits.
	audioMaxDTMF = 1000
)

type audioSecondsArg int

func (audioSecondsArg) argSchema() *jsonschema.Schema {
	return withDefault(intSchema(fmt.Sprintf("most seconds of audio per file, 1 to %d (default %d); past it a file is cut and says so", audioMaxSeconds, audioDefaultSeconds), 1, audioMaxSeconds), audioDefaultSeconds)
}

type ssrcArg string

func (ssrcArg) argSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", Description: "one stream by SSRC, hex as rtp_streams shows it (e.g. 58F33DEA or 0x58f33dea); default every stream of the call"}
}

// parse returns the SSRC, or an argument error.
func (a ssrcArg) parse() (uint32, error) {
	s := strings.TrimPrefix(strings.ToLower(strings.TrimSpace(string(a))), "0x")
	v, err := strconv.ParseUint(s, 16, 32)
	if err != nil {
		return 0, argErr("ssrc", "an SSRC is up to 8 hex digits, as rtp_streams shows it", "%q is not a hex SSRC", string(a))
	}
	return uint32(v), nil
}

type exportAudioIn struct {
	CallID     callIDArg       `json:"call_id"`
	SSRC       ssrcArg         `json:"ssrc,omitempty"`
	MaxSeconds audioSecondsArg `json:"max_seconds,omitempty"`
}

type exportAudioOut struct {
	CallID     string            `json:"call_id"`
	Dir        string            `json:"dir"`
	Streams    []audioStreamRow  `json:"streams" jsonschema:"one WAV file per stream (direction and SSRC), mono, 16-bit"`
	Mixed      *audioFileRow     `json:"mixed" jsonschema:"stereo WAV: caller left, callee right, aligned on capture time; null with mixed_why when not written"`
	MixedWhy   string            `json:"mixed_why,omitempty"`
	Skipped    []audioSkippedRow `json:"skipped" jsonschema:"streams of the call with no file, and why"`
	DTMF       []dtmfRow         `json:"dtmf" jsonschema:"RFC 4733 digits the media analyser saw on the exported streams"`
	DTMFNot    int               `json:"dtmf_not_listed"`
	MaxSeconds int               `json:"max_seconds"`
	Bytes      int64             `json:"bytes" jsonschema:"all files written"`
	ScanCut    bool              `json:"scan_cut" jsonschema:"the frame scan's bound ended the search; packets captured from scan_cut_at on were not read"`
	ScanCutAt  *time.Time        `json:"scan_cut_at"`
}

// exportAudio links every file it wrote, as export_capture does.
var exportAudio = linkedTool[exportAudioIn, exportAudioOut]{tool: tool[exportAudioIn, exportAudioOut]{
	name:  "export_audio",
	reads: readsSIP | readsMedia | readsFrames,
	desc:  "Decode a call's RTP (G.711 µ-law/A-law, G.722) to WAV in the export directory: one file per stream and a stereo mix (caller left, callee right). Loss, pauses and comfort noise become silence of their length, each listed; RFC 4733 DTMF listed. SRTP is decrypted with an SDES key its SDP offered, refused without one; unsupported codecs and payloads not kept are refused.",
	hints: writesFile(),
	text:  []textSource{textSIP},
	run:   runExportAudio,
}, links: func(out exportAudioOut) []resourceLink {
	var ls []resourceLink
	for _, s := range out.Streams {
		ls = append(ls, resourceLink{name: "exports/" + filepath.Base(s.File.Path), bytes: s.File.Bytes})
	}
	if out.Mixed != nil {
		ls = append(ls, resourceLink{name: "exports/" + filepath.Base(out.Mixed.Path), bytes: out.Mixed.Bytes})
	}
	return ls
}}

// audioStream is one stream on its way to a file.
type audioStream struct {
	view  rtp.StreamView
	side  string
	pkts  []audio.Packet
	track audio.Track
	// keys are the SDES keys the call's SDP offered when the stream is
	// SRTP, its own sender's first; srtp says one authenticated it.
	keys       []sdp.Secret
	srtp       bool
	authFailed int
}

func runExportAudio(c *call, in exportAudioIn) (exportAudioOut, error) {
	sn := c.d.SIP.Snapshot()
	dl, err := lookupDialog(sn, in.CallID)
	if err != nil {
		return exportAudioOut{}, err
	}
	maxS := count(int(in.MaxSeconds), audioDefaultSeconds)
	out := exportAudioOut{CallID: dl.CallID, Dir: c.d.SIPExport.Dir(), Streams: []audioStreamRow{}, Skipped: []audioSkippedRow{}, DTMF: []dtmfRow{}, MaxSeconds: maxS}
	ms := c.d.Media.Snapshot(false)
	views := ms.ForCall(dl.CallID)
	if in.SSRC != "" {
		ssrc, err := in.SSRC.parse()
		if err != nil {
			return out, err
		}
		views = slices.DeleteFunc(views, func(s rtp.StreamView) bool { return s.Key.SSRC != ssrc })
		if len(views) == 0 {
			return out, notFound("rtp_streams with call_id lists the call's streams and their SSRCs", "call %q has no RTP stream with SSRC %08X", dl.CallID, ssrc)
		}
	}
	if len(views) == 0 {
		return out, notFound("rtp_streams with call_id shows what media the box tied to the call; a call that was never answered has none",
			"call %q has no RTP stream the media analyser tied to it", dl.CallID)
	}
	dv := ms.Dialogs[dl.CallID]
	caller, callee, secure, keys := sdpAddrs(dl, dv)
	var streams []*audioStream
	var flows []sip.MediaFlow
	for _, v := range views {
		var ks []sdp.Secret
		if secure[v.Key.Src] || secure[v.Key.Dst] {
			// RFC 4568: each side offers the key it sends with; the
			// others are tried after it.
			ks = slices.Concat(keys[v.Key.Src], keys[v.Key.Dst])
			if len(ks) == 0 {
				out.Skipped = append(out.Skipped, audioSkippedRow{StreamID: v.ID, Reason: "SRTP without keys: the call's SDP offers this address a secure profile (RTP/SAVP, SAVPF, DTLS) and no a=crypto key the box can read; its payload is ciphertext"})
				continue
			}
		}
		// streams and flows share an index: ReadMedia's Flow is both.
		streams = append(streams, &audioStream{view: v, side: streamSide(v, dl, caller, callee), keys: ks})
		flows = append(flows, sip.MediaFlow{Src: v.Key.Src, Dst: v.Key.Dst, First: v.First, Last: v.Last, Packets: v.Packets})
	}
	if len(streams) == 0 {
		return out, failErr(CodeUnavailable, "every stream of the call is SRTP without keys: "+skippedReasons(out.Skipped), "only SDES keys (a=crypto in SDP the box reads, clear or TLS-decrypted) decrypt SRTP here; export_capture writes the packets for a tool that has the keys")
	}
	mr, err := c.d.SIPExport.ReadMedia(c.ctx, flows, audioMaxDatagrams, func(d sip.MediaDatagram) {
		s := streams[d.Flow]
		s.pkts = append(s.pkts, audio.Packet{Time: d.Time, Data: d.Payload})
	})
	if err != nil {
		return out, fmt.Errorf("read the call's media: %w", err)
	}
	out.ScanCut, out.ScanCutAt = mr.ScanCut, mr.ScanCutAt
	if mr.Cut {
		c.warnf("the datagram bound (%d) was reached: later packets were not read, so the files end early", audioMaxDatagrams)
	}
	if mr.ScanCut && mr.ScanCutAt != nil {
		c.warnf("the frame scan's bound ended the search: packets captured from %s on were not read", ts(*mr.ScanCutAt))
	}
	now := time.Now()
	var rendered []*audioStream
	for _, s := range streams {
		why := ""
		if len(s.keys) > 0 {
			why = decryptStream(s)
		}
		if why == "" {
			why = renderStream(s, maxS, mr)
		}
		if why != "" {
			out.Skipped = append(out.Skipped, audioSkippedRow{StreamID: s.view.ID, Reason: why})
			continue
		}
		row, err := writeStream(c, s, now)
		if err != nil {
			return out, err
		}
		out.Bytes += row.File.Bytes
		out.Streams = append(out.Streams, row)
		rendered = append(rendered, s)
		if s.track.Cut {
			c.warnf("stream %s: max_seconds (%d) cut its file at %.3f s", s.view.ID, maxS, s.track.CutAt.Seconds())
		}
	}
	if len(rendered) == 0 {
		return out, failErr(CodeUnavailable, "no stream of the call could be decoded: "+skippedReasons(out.Skipped), "rtp_streams shows the call's codecs; export_capture writes what the box holds of the call")
	}
	mixed, why, err := writeMix(c, rendered, maxS, now)
	if err != nil {
		return out, err
	}
	out.Mixed, out.MixedWhy = mixed, why
	if mixed != nil {
		out.Bytes += mixed.Bytes
	}
	out.DTMF, out.DTMFNot = callDTMF(ms, dl.CallID, views)
	for _, s := range out.Skipped {
		c.warnf("stream %s has no file: %s", s.StreamID, s.Reason)
	}
	return out, nil
}

// decryptStream finds which offered key authenticates s's first packet
// and decrypts every packet with it in capture order (the rollover
// counter follows the sequence numbers); a packet whose tag does not
// match is left out and counted, as the media analyser does. It says why
// when no key fits.
func decryptStream(s *audioStream) string {
	if len(s.pkts) == 0 {
		return "" // renderStream says why nothing was found
	}
	var key srtp.Key
	found, why := false, ""
	for _, c := range s.keys {
		k, err := srtp.ParseCrypto(string(c))
		if err != nil {
			why = err.Error() // never holds key material
			continue
		}
		probe, err := srtp.NewSession(k)
		if err != nil {
			why = err.Error()
			continue
		}
		if probe.Check(s.pkts[0].Data) == nil {
			key, found = k, true
			break
		}
	}
	if !found {
		if why == "" {
			why = "no offered key authenticates its packets"
		}
		return fmt.Sprintf("SRTP: none of the %d SDES keys the call's SDP offers decrypts it (%s)", len(s.keys), why)
	}
	sess, err := srtp.NewSession(key)
	if err != nil {
		return "SRTP: " + err.Error()
	}
	clear := s.pkts[:0]
	for _, p := range s.pkts {
		dec, err := sess.Unprotect(nil, p.Data)
		if err != nil {
			s.authFailed++
			continue
		}
		p.Data = dec
		clear = append(clear, p)
	}
	s.pkts, s.srtp = clear, true
	return ""
}

// renderStream decodes s's packets, or says why it has no file.
func renderStream(s *audioStream, maxSeconds int, mr sip.MediaRead) string {
	if len(s.pkts) == 0 {
		if mr.Trimmed > 0 {
			return fmt.Sprintf("payload not kept: %d frames of the call's media were recorded cut short (recorder.rtp_headers_only keeps RTP headers only, or a snap length cut them) and the frame rings no longer hold them", mr.Trimmed)
		}
		return "payload not kept: none of its packets is in the frame rings or the recorder any more (evicted, or the recorder is off)"
	}
	codecs := map[uint8]string{}
	for _, p := range s.view.PayloadTypes {
		if own, ok := p.Codec.Own(); ok {
			codecs[p.PT] = own
		} else {
			codecs[p.PT] = string(p.Codec)
		}
	}
	tr, err := audio.Render(s.pkts, audio.Options{Codecs: codecs, MaxDuration: time.Duration(maxSeconds) * time.Second})
	var unsup *audio.Unsupported
	if errors.As(err, &unsup) {
		names := make([]string, len(unsup.Codecs))
		for i, n := range unsup.Codecs {
			b, _ := codecName(n).MarshalText()
			names[i] = string(b)
		}
		return "unsupported codec " + strings.Join(names, ", ") + " (export_audio decodes PCMU, PCMA and G722)"
	}
	if len(tr.Samples) == 0 {
		return fmt.Sprintf("no audio: of its %d packets found, %d are malformed and the rest comfort noise or DTMF events (listed in dtmf)", len(s.pkts), tr.Malformed)
	}
	s.track = tr
	return ""
}

// writeStream writes s's track as a mono WAV file.
func writeStream(c *call, s *audioStream, now time.Time) (audioStreamRow, error) {
	tr := &s.track
	f, err := writeWAV(c, now, "audio-"+s.view.SSRC, tr.Rate, 1, tr.Samples)
	if err != nil {
		return audioStreamRow{}, err
	}
	unsup := 0
	for _, n := range tr.Unsupported {
		unsup += n
	}
	row := audioStreamRow{StreamID: s.view.ID, SSRC: s.view.SSRC, Side: s.side, Codec: codecName(tr.Codec), File: f, Start: ts(tr.Start),
		Packets: tr.Packets, Lost: tr.Lost, Duplicates: tr.Duplicates, Overlapped: tr.Overlapped, TimestampJumps: tr.Jumps, Malformed: tr.Malformed,
		OtherRate: tr.OtherRate, Unsupported: unsup, EventPackets: tr.Events, PayloadsMissing: int(max(int64(s.view.Packets)-int64(len(s.pkts)+s.authFailed), 0)),
		SilenceS: tr.SilenceTotal.Seconds(), Gaps: audioGapRows(tr.Gaps), GapsNotListed: tr.GapsDropped, Cut: tr.Cut,
		SRTP: s.srtp, SRTPAuthFailed: s.authFailed}
	if tr.Cut {
		at := tr.CutAt.Seconds()
		row.CutAtS = &at
	}
	return row, nil
}

// writeMix writes the stereo file, or says why there is none.
func writeMix(c *call, ss []*audioStream, maxSeconds int, now time.Time) (*audioFileRow, string, error) {
	var left, right []*audio.Track
	rate, side := 0, ""
	for _, s := range ss {
		side = s.side
		rate = max(rate, s.track.Rate)
		if s.side == sideCaller {
			left = append(left, &s.track)
		} else {
			right = append(right, &s.track)
		}
	}
	if len(left) == 0 || len(right) == 0 {
		return nil, fmt.Sprintf("every stream with audio is the %s's: the other side has none the box could decode, so there is nothing to mix", side), nil
	}
	st, _, cut := audio.Mix(left, right, rate, maxSeconds*rate)
	if cut {
		c.warnf("max_seconds (%d) cut the mixed file", maxSeconds)
	}
	f, err := writeWAV(c, now, "audio-mixed", rate, 2, st)
	if err != nil {
		return nil, "", err
	}
	return &f, "", nil
}

func writeWAV(c *call, now time.Time, prefix string, rate, channels int, samples []int16) (audioFileRow, error) {
	b, err := wav.Encode(rate, channels, samples)
	if err != nil {
		return audioFileRow{}, err
	}
	path, err := c.d.SIPExport.WriteFile(now, prefix, ".wav", b)
	if err != nil {
		return audioFileRow{}, fmt.Errorf("write %s audio to %s (is store.export_dir writable, with space?): %w", prefix, c.d.SIPExport.Dir(), err)
	}
	return audioFileRow{Path: path, Bytes: int64(len(b)), SampleRate: rate, Channels: channels,
		DurationS: float64(len(samples)/channels) / float64(rate)}, nil
}

// Sides of a call.
const (
	sideCaller = "caller"
	sideCallee = "callee"
)

// sdpAddrs returns the media addresses each side's SDP announced (the
// caller's being those in SDP its first request's sender sent), the
// addresses of SRTP sections and the SDES keys each offered, from the SDP
// the media analyser kept.
func sdpAddrs(dl *sip.Dialog, dv *rtp.DialogView) (caller, callee, secure map[netip.AddrPort]bool, keys map[netip.AddrPort][]sdp.Secret) {
	caller, callee, secure, keys = map[netip.AddrPort]bool{}, map[netip.AddrPort]bool{}, map[netip.AddrPort]bool{}, map[netip.AddrPort][]sdp.Secret{}
	if dv == nil {
		return caller, callee, secure, keys
	}
	for _, ev := range dv.SDP {
		if ev.Session == nil {
			continue
		}
		for _, m := range ev.Session.Media {
			a, ok := m.Addr()
			if !ok || m.Type != "audio" {
				continue
			}
			if m.SRTP() != "" {
				secure[a] = true
				keys[a] = append(keys[a], m.Crypto...)
			}
			if ev.From == dl.Src {
				caller[a] = true
			} else {
				callee[a] = true
			}
		}
	}
	return caller, callee, secure, keys
}

// streamSide places a stream: sent from the caller's media address or to the
// callee's is the caller's; else the other way round; else by whether it
// comes from the host that sent the first request.
func streamSide(v rtp.StreamView, dl *sip.Dialog, caller, callee map[netip.AddrPort]bool) string {
	switch {
	case caller[v.Key.Src] || callee[v.Key.Dst]:
		return sideCaller
	case callee[v.Key.Src] || caller[v.Key.Dst]:
		return sideCallee
	case v.Key.Src.Addr() == dl.Src.Addr():
		return sideCaller
	}
	return sideCallee
}

func skippedReasons(ss []audioSkippedRow) string {
	parts := make([]string, len(ss))
	for i, s := range ss {
		parts[i] = s.StreamID + ": " + s.Reason
	}
	return strings.Join(parts, "; ")
}

// callDTMF lists the RFC 4733 digits of the selected streams (some
// senders put events on an SSRC of their own), at most audioMaxDTMF, and
// how many more there were.
func callDTMF(ms *rtp.Snapshot, callID string, views []rtp.StreamView) ([]dtmfRow, int) {
	ids := map[string]bool{}
	for _, v := range views {
		ids[v.ID] = true
	}
	rows, more := []dtmfRow{}, 0
	for _, e := range ms.Events {
		if e.CallID != callID || e.Method != rtp.MethodRFC4733 || !ids[e.Stream] {
			continue
		}
		if len(rows) == audioMaxDTMF {
			more++
			continue
		}
		rows = append(rows, dtmfRowOf(e))
	}
	return rows, more
}
