package main

// export_audio through the real binary on the reference G.711 captures,
// checked against tshark (where the RTP is, its timestamps and payload
// bytes), soxi (what a player reads from the files) and sox's own A-law
// decoder (the samples).

import (
	"bytes"
	le "encoding/binary"
	"encoding/hex"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"fieldtap/board/sim/sipgen"
	"fieldtap/mcp"
	"fieldtap/tools/refdata"
)

// tsharkRTP is one RTP packet as tshark decodes it.
type tsharkRTP struct {
	pt      int
	ts      uint32
	payload []byte
}

// tsharkStreams reads every RTP packet of a capture, by SSRC and source
// address (SIP_CALL_RTP_G711 relays one SSRC over two legs).
func tsharkStreams(t *testing.T, capture string) map[string][]tsharkRTP {
	t.Helper()
	out, err := exec.Command("tshark", "-r", capture, "-Y", "rtp", "-T", "fields", "-E", "separator=/t",
		"-e", "rtp.ssrc", "-e", "ip.src", "-e", "udp.srcport", "-e", "rtp.p_type", "-e", "rtp.timestamp", "-e", "rtp.payload").Output()
	if err != nil {
		t.Fatalf("tshark: %v", err)
	}
	streams := map[string][]tsharkRTP{}
	for line := range strings.Lines(string(out)) {
		f := strings.Split(strings.TrimRight(line, "\n"), "\t")
		if len(f) < 6 {
			continue
		}
		ssrc, _ := strconv.ParseUint(strings.TrimPrefix(f[0], "0x"), 16, 32)
		pt, _ := strconv.Atoi(f[3])
		ts, _ := strconv.ParseUint(f[4], 10, 32)
		payload, _ := hex.DecodeString(strings.ReplaceAll(f[5], ":", ""))
		key := strings.ToUpper(strconv.FormatUint(ssrc|1<<32, 16)[1:]) + "@" + f[1] + ":" + f[2]
		streams[key] = append(streams[key], tsharkRTP{pt: pt, ts: uint32(ts), payload: payload})
	}
	return streams
}

func soxi(t *testing.T, flag, path string) string {
	t.Helper()
	out, err := exec.Command("soxi", flag, path).Output()
	if err != nil {
		t.Fatalf("soxi %s %s: %v", flag, path, err)
	}
	return strings.TrimSpace(string(out))
}

// g711 names a G.711 law as its RTP payload type and sox's encoding.
type g711 struct {
	pt  int
	sox string
}

var (
	alaw = g711{8, "a-law"}
	ulaw = g711{0, "u-law"}
)

// soxDecode decodes G.711 bytes with sox, little-endian 16-bit out.
func soxDecode(t *testing.T, law g711, b []byte) []int16 {
	t.Helper()
	cmd := exec.Command("sox", "-t", "raw", "-e", law.sox, "-b", "8", "-r", "8000", "-c", "1", "-", "-t", "raw", "-e", "signed", "-b", "16", "-L", "-")
	cmd.Stdin = bytes.NewReader(b)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("sox %s decode: %v", law.sox, err)
	}
	s := make([]int16, len(out)/2)
	for i := range s {
		s[i] = int16(le.LittleEndian.Uint16(out[2*i:]))
	}
	return s
}

type audioAnswer struct {
	OK   bool `json:"ok"`
	Data struct {
		Streams []struct {
			StreamID string `json:"stream_id"`
			SSRC     string `json:"ssrc"`
			Side     string `json:"side"`
			Codec    string `json:"codec"`
			File     struct {
				Path      string  `json:"path"`
				Bytes     int64   `json:"bytes"`
				DurationS float64 `json:"duration_s"`
			} `json:"file"`
			Packets  int     `json:"packets"`
			Lost     int     `json:"lost_packets"`
			SilenceS float64 `json:"silence_s"`
			Gaps     []struct {
				OffsetS   float64 `json:"offset_s"`
				DurationS float64 `json:"duration_s"`
				Cause     string  `json:"cause"`
				Lost      int     `json:"lost_packets"`
			} `json:"gaps"`
		} `json:"streams"`
		Mixed *struct {
			Path     string `json:"path"`
			Channels int    `json:"channels"`
		} `json:"mixed"`
		Skipped []struct {
			StreamID string `json:"stream_id"`
			Reason   string `json:"reason"`
		} `json:"skipped"`
		DTMF []struct {
			Digit string `json:"digit"`
		} `json:"dtmf"`
	} `json:"data"`
}

// TestExportAudioAgainstSox: per reference capture, every stream file's
// duration is the stream's (first to last RTP timestamp plus one packet)
// within 1 %, at 8000 Hz mono, and its samples are sox's A-law decoding
// of tshark's payload bytes, each packet at its timestamp and silence
// between; the mixed file is 8000 Hz stereo; each file is linked.
func TestExportAudioAgainstSox(t *testing.T) {
	for _, prog := range []string{"tshark", "sox", "soxi"} {
		if _, err := exec.LookPath(prog); err != nil {
			t.Skipf("%s is not installed (Debian sox and tshark)", prog)
		}
	}
	for _, c := range []struct {
		file, callID string
		streams      int
	}{
		{"RTP-Protocol.pcap", "1907983263271201083544@10.33.6.101", 2},
		{"SIP_CALL_RTP_G711.pcap", "12013223@200.57.7.195", 2},
	} {
		t.Run(c.file, func(t *testing.T) {
			capture := refdata.File(t, "sip", c.file)
			dir := t.TempDir()
			cfg := writeFile(t, filepath.Join(dir, "fieldtapd.toml"), []byte("[store]\nexport_dir = \""+filepath.Join(dir, "exports")+"\"\n"))
			cc := startContract(t, "--config", cfg, "--board", "none", "--source", capture)
			cc.waitExhausted()
			res, err := cc.s.CallTool(cc.ctx, &sdk.CallToolParams{Name: "export_audio", Arguments: map[string]any{"call_id": c.callID}})
			if err != nil || res.IsError {
				t.Fatalf("export_audio: %v %+v", err, res)
			}
			body := res.Content[0].(*sdk.TextContent).Text
			cc.validate("export_audio", body)
			var a audioAnswer
			if err := json.Unmarshal([]byte(body), &a); err != nil {
				t.Fatal(err)
			}
			if len(a.Data.Streams) != c.streams || a.Data.Mixed == nil {
				t.Fatalf("%d streams, mixed %v, skipped %+v; want %d and a mix", len(a.Data.Streams), a.Data.Mixed, a.Data.Skipped, c.streams)
			}
			links := map[string]bool{}
			for _, ct := range res.Content {
				if l, isLink := ct.(*sdk.ResourceLink); isLink && l.MIMEType == "audio/wav" {
					links[l.URI] = true
				}
			}
			truth := tsharkStreams(t, capture)
			for _, s := range a.Data.Streams {
				src := strings.SplitN(s.StreamID, ">", 2)[0]
				pkts := truth[s.SSRC+"@"+src]
				if len(pkts) == 0 {
					t.Fatalf("tshark has no RTP for %s (%s)", s.StreamID, s.SSRC+"@"+src)
				}
				checkStreamFile(t, s.File.Path, alaw, pkts)
				t.Logf("%s: %s side, %d packets, %.3f s, %d lost, %.3f s of silence in %d gaps", s.StreamID, s.Side, s.Packets, s.File.DurationS, s.Lost, s.SilenceS, len(s.Gaps))
				if !links[mcp.FilesURIPrefix+"exports/"+filepath.Base(s.File.Path)] {
					t.Errorf("no resource_link to %s", s.File.Path)
				}
			}
			if got := soxi(t, "-r", a.Data.Mixed.Path) + "/" + soxi(t, "-c", a.Data.Mixed.Path); got != "8000/2" {
				t.Errorf("mixed file: rate/channels %s, want 8000/2", got)
			}
			if len(links) != c.streams+1 {
				t.Errorf("%d audio links, want %d", len(links), c.streams+1)
			}
		})
	}
}

// checkStreamFile compares one mono file with tshark's packets of its
// stream: soxi's rate, channels and duration, and every sample (sox's
// decoding of each packet of law at its timestamp, silence between).
func checkStreamFile(t *testing.T, path string, law g711, pkts []tsharkRTP) {
	t.Helper()
	first, last, lastLen := pkts[0].ts, pkts[0].ts, 0
	for _, p := range pkts {
		if p.pt != law.pt {
			continue
		}
		if int32(p.ts-last) >= 0 {
			last, lastLen = p.ts, len(p.payload)
		}
	}
	want := float64(last-first+uint32(lastLen)) / 8000
	if r, ch := soxi(t, "-r", path), soxi(t, "-c", path); r != "8000" || ch != "1" {
		t.Errorf("%s: rate %s channels %s, want 8000 and 1", path, r, ch)
	}
	got, _ := strconv.ParseFloat(soxi(t, "-D", path), 64)
	if math.Abs(got-want) > want/100 {
		t.Errorf("%s: soxi says %.3f s, the stream's timestamps %.3f s (more than 1 %% apart)", path, got, want)
	}
	t.Logf("%s: %.4f s by soxi, %.4f s by the timestamps", filepath.Base(path), got, want)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	samples := make([]int16, (len(b)-44)/2)
	for i := range samples {
		samples[i] = int16(le.LittleEndian.Uint16(b[44+2*i:]))
	}
	expect := make([]int16, len(samples))
	var raw []byte
	var at []int
	for _, p := range pkts {
		if p.pt == law.pt {
			raw = append(raw, p.payload...)
			at = append(at, int(p.ts-first))
		}
	}
	dec := soxDecode(t, law, raw)
	off, n := 0, 0
	for _, p := range pkts {
		if p.pt != law.pt {
			continue
		}
		copy(expect[min(at[n], len(expect)):], dec[off:off+len(p.payload)])
		off += len(p.payload)
		n++
	}
	diff := 0
	for i := range samples {
		if samples[i] != expect[i] {
			diff++
		}
	}
	if diff > 0 {
		t.Errorf("%s: %d of %d samples differ from sox's decoding of tshark's payload placed by timestamp", path, diff, len(samples))
	}
}

// TestExportAudioOfLossyCall: the first answered call of four generated
// (board/sim/sipgen), PCMU with 5 % of the RTP dropped at random. Every file is checked as the
// reference captures' are, against tshark and sox's µ-law decoder; each
// stream's lost_packets is the sequence numbers tshark does not see, and
// every one of them is in a gap of cause loss.
func TestExportAudioOfLossyCall(t *testing.T) {
	for _, prog := range []string{"tshark", "sox", "soxi"} {
		if _, err := exec.LookPath(prog); err != nil {
			t.Skipf("%s is not installed (Debian sox and tshark)", prog)
		}
	}
	dir := t.TempDir()
	capture := filepath.Join(dir, "lossy.pcapng")
	f, err := os.Create(capture)
	if err != nil {
		t.Fatal(err)
	}
	o := sipgen.Options{Seed: 7, Start: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Duration: 60 * time.Second, Calls: 4, Impair: sipgen.Impairment{LossPct: 5}}
	if err := sipgen.WritePcapng(f, o); err != nil {
		t.Fatal(err)
	}
	f.Close()
	cfg := writeFile(t, filepath.Join(dir, "fieldtapd.toml"), []byte("[store]\nexport_dir = \""+filepath.Join(dir, "exports")+"\"\n"))
	cc := startContract(t, "--config", cfg, "--board", "none", "--source", capture)
	cc.waitExhausted()
	env, _ := cc.call("list_dialogs", map[string]any{"filter": "final_code == 200", "limit": 1})
	rows := env["items"].([]any)
	if len(rows) != 1 {
		t.Fatalf("%d answered dialogs of the generated calls", len(rows))
	}
	callID := rows[0].(map[string]any)["call_id"].(string)
	env, blocks := cc.call("export_audio", map[string]any{"call_id": callID})
	var a audioAnswer
	if err := json.Unmarshal([]byte(blocks[0]), &a); err != nil || !a.OK {
		t.Fatalf("export_audio: %v %v", err, env)
	}
	if len(a.Data.Streams) != 2 || a.Data.Mixed == nil {
		t.Fatalf("%d streams, mixed %v, skipped %+v", len(a.Data.Streams), a.Data.Mixed, a.Data.Skipped)
	}
	env, _ = cc.call("dtmf_events", map[string]any{"call_id": callID})
	var digits []string
	for _, r := range env["items"].([]any) {
		digits = append(digits, r.(map[string]any)["digit"].(string))
	}
	var listed []string
	for _, d := range a.Data.DTMF {
		listed = append(listed, d.Digit)
	}
	if strings.Join(listed, "") != strings.Join(digits, "") {
		t.Errorf("export_audio lists digits %q, dtmf_events %q", listed, digits)
	}
	t.Logf("digits %q", listed)
	truth := tsharkStreams(t, capture)
	for _, s := range a.Data.Streams {
		src := strings.SplitN(s.StreamID, ">", 2)[0]
		pkts := truth[s.SSRC+"@"+src]
		checkStreamFile(t, s.File.Path, ulaw, pkts)
		want := missingSeqs(t, capture, s.SSRC, src)
		inGaps := 0
		for _, g := range s.Gaps {
			if g.Cause == "loss" {
				inGaps += g.Lost
			}
		}
		t.Logf("%s: %d packets, %d lost (tshark: %d sequence numbers missing), %d in loss gaps, %.3f s of silence", s.StreamID, s.Packets, s.Lost, want, inGaps, s.SilenceS)
		if s.Lost != want || inGaps != want || want == 0 {
			t.Errorf("%s: lost %d, in loss gaps %d; tshark misses %d sequence numbers (want equal and not 0)", s.StreamID, s.Lost, inGaps, want)
		}
	}
}

// missingSeqs counts the sequence numbers between a stream's first and
// last that tshark does not see.
func missingSeqs(t *testing.T, capture, ssrc, src string) int {
	t.Helper()
	host, port, _ := strings.Cut(src, ":")
	out, err := exec.Command("tshark", "-r", capture, "-Y", "rtp.ssrc == 0x"+ssrc+" && ip.src == "+host+" && udp.srcport == "+port,
		"-T", "fields", "-e", "rtp.seq").Output()
	if err != nil {
		t.Fatalf("tshark: %v", err)
	}
	seen := map[int]bool{}
	lo, hi := math.MaxInt, 0
	for _, f := range strings.Fields(string(out)) {
		n, _ := strconv.Atoi(f)
		seen[n] = true
		lo, hi = min(lo, n), max(hi, n)
	}
	return hi - lo + 1 - len(seen)
}
