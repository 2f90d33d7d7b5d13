package sip_test

// export_capture with media: a dialog's file holds its SIP and the RTP
// and RTCP the media analyser counted on it, checked by reading the file
// back through the same analysers and, where installed, with tshark.
// An external test package: services/rtp imports services/sip.

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"fieldtap/drivers/wire"

	"fieldtap/board/sim/sipgen"
	"fieldtap/drivers/pcapfile"
	"fieldtap/services/framestore"
	"fieldtap/services/netdecode"
	"fieldtap/services/recorder"
	"fieldtap/services/ring"
	"fieldtap/services/rtp"
	"fieldtap/services/sip"
	"fieldtap/tools/refdata"
)

const testPort = "span0"

// box is the daemon's Ethernet wiring in small: a frame ring, the SIP
// analyser feeding frame references, the media analyser on its hook.
type box struct {
	store *sip.Store
	sipA  *sip.Analyser
	media *rtp.Analyser
	fs    *framestore.Store
	ex    *sip.Exporter
	rec   *recorder.Port // nil: no recorder
}

func newBox(t *testing.T, dir string) *box {
	t.Helper()
	fs, err := framestore.New(ring.Limits{Items: 1 << 20, Bytes: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	st, err := sip.New(sip.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	b := &box{store: st, media: rtp.NewAnalyser(rtp.Options{}), fs: fs}
	b.sipA = sip.NewAnalyser(b.store, netdecode.Options{})
	b.sipA.SetMediaHook(b.media)
	if dir != "" {
		b.ex = sip.NewExporter(dir, netdecode.Options{})
		b.ex.AddPort(testPort, fs)
	}
	return b
}

func (b *box) feed(t *testing.T, at time.Time, link wire.LinkType, data []byte) {
	t.Helper()
	data = bytes.Clone(data)
	if _, err := b.fs.Append(framestore.Record{Time: at, Link: link, Data: data, OrigLen: len(data)}); err != nil {
		t.Fatal(err)
	}
	b.sipA.Feed(at, link, data)
	if b.rec != nil {
		b.rec.Write(at, uint16(link), data, len(data))
	}
}

func (b *box) feedFile(t *testing.T, path string) {
	t.Helper()
	refdata.EachRecord(t, path, func(rec pcapfile.Record) { b.feed(t, rec.Time, rec.Link, rec.Data) })
}

// export writes callID's dialog and media to a file.
func (b *box) export(t *testing.T, callID string) sip.ExportResult {
	t.Helper()
	sn := b.store.Snapshot()
	dl := sn.Lookup(callID)
	if dl == nil {
		t.Fatalf("no dialog %q", callID)
	}
	flows := b.media.Snapshot(false).Flows(callID)
	res, err := b.ex.Export(context.Background(), sn, []*sip.Dialog{dl}, flows, time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// callFigures is what a box knows of one call: its SIP message count,
// its streams' packets by stream id, its RTCP datagrams.
type callFigures struct {
	messages int
	streams  map[string]uint64
	rtcp     uint64
}

func (b *box) figures(callID string) callFigures {
	out := callFigures{streams: map[string]uint64{}}
	if dl := b.store.Snapshot().Lookup(callID); dl != nil {
		out.messages = len(dl.Messages())
	}
	sn := b.media.Snapshot(false)
	for _, s := range sn.ForCall(callID) {
		out.streams[s.ID] = s.Packets
	}
	for _, f := range sn.Flows(callID) {
		if f.RTCP {
			out.rtcp += f.Packets
		}
	}
	return out
}

func (c callFigures) rtpPackets() uint64 {
	var n uint64
	for _, p := range c.streams {
		n += p
	}
	return n
}

func TestExportIncludesMedia(t *testing.T) {
	cases := []struct {
		name  string
		load  func(t *testing.T, b *box)
		calls func(t *testing.T, b *box) []string // Call-IDs with media to export
		// minStreams is the least number of streams each call must have:
		// 2 proves both directions are in the file.
		minStreams int
		wantRTCP   bool
	}{
		{
			name: "generated call, both directions",
			load: func(t *testing.T, b *box) {
				o := sipgen.Options{Seed: 3, Start: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Duration: 30 * time.Second, Calls: 3}
				if err := sipgen.Generate(o, func(p sipgen.Packet) error {
					b.feed(t, p.Time, wire.LinkEthernet, p.Data)
					return nil
				}); err != nil {
					t.Fatal(err)
				}
			},
			calls:      callsWithMedia,
			minStreams: 2,
		},
		{
			name:       "sip-rtp-g711.pcap, one-way media",
			load:       func(t *testing.T, b *box) { b.feedFile(t, refdata.File(t, "sip", "sip-rtp-g711.pcap")) },
			calls:      callsWithMedia,
			minStreams: 1,
		},
		{
			name:       "SIP_CALL_RTP_G711.pcap, RTCP and unrelated traffic",
			load:       func(t *testing.T, b *box) { b.feedFile(t, refdata.File(t, "sip", "SIP_CALL_RTP_G711.pcap")) },
			calls:      callsWithMedia,
			minStreams: 1,
			wantRTCP:   true,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := newBox(t, t.TempDir())
			tc.load(t, b)
			ids := tc.calls(t, b)
			if len(ids) == 0 {
				t.Fatal("no call with media")
			}
			sawRTCP := false
			for _, id := range ids {
				want := b.figures(id)
				if len(want.streams) < tc.minStreams {
					t.Fatalf("%s: %d streams, want at least %d", id, len(want.streams), tc.minStreams)
				}
				res := b.export(t, id)
				if res.RTPFrames != int(want.rtpPackets()) || res.RTCPFrames != int(want.rtcp) || res.MediaFramesMissing != 0 || res.ScanCut {
					t.Errorf("%s: export %+v, want %d RTP and %d RTCP frames, none missing", id, res, want.rtpPackets(), want.rtcp)
				}
				if res.Frames != res.Messages+res.RTPFrames+res.RTCPFrames {
					t.Errorf("%s: %d frames written, want %d SIP + %d RTP + %d RTCP", id, res.Frames, res.Messages, res.RTPFrames, res.RTCPFrames)
				}
				t.Logf("%s: %d SIP, %d RTP, %d RTCP frames in %d streams", id, res.Messages, res.RTPFrames, res.RTCPFrames, len(want.streams))
				sawRTCP = sawRTCP || want.rtcp > 0
				// Reading the file back gives the same call.
				back := newBox(t, "")
				back.feedFile(t, res.Path)
				got := back.figures(id)
				if got.messages != want.messages || got.rtcp != want.rtcp || !equalCounts(got.streams, want.streams) {
					t.Errorf("%s: file holds %+v, the capture had %+v", id, got, want)
				}
				checkCaptureOrder(t, res.Path)
				checkTshark(t, res.Path, want)
			}
			if tc.wantRTCP && !sawRTCP {
				t.Error("no RTCP exported from a capture that has it")
			}
		})
	}
}

// callsWithMedia lists the SIP dialogs the media analyser has streams
// for (MGCP-signalled media has a Call-ID but no SIP dialog to export).
func callsWithMedia(t *testing.T, b *box) []string {
	t.Helper()
	seen := map[string]bool{}
	var out []string
	sn := b.store.Snapshot()
	for _, s := range b.media.Snapshot(false).Streams {
		if s.CallID != "" && !seen[s.CallID] && sn.Lookup(s.CallID) != nil {
			seen[s.CallID] = true
			out = append(out, s.CallID)
		}
	}
	return out
}

func equalCounts(a, b map[string]uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// checkCaptureOrder: the file's timestamps never step backwards.
func checkCaptureOrder(t *testing.T, path string) {
	t.Helper()
	var last time.Time
	i := 0
	refdata.EachRecord(t, path, func(rec pcapfile.Record) {
		i++
		if rec.Time.Before(last) {
			t.Fatalf("%s: frame %d at %v before its predecessor at %v", path, i, rec.Time, last)
		}
		last = rec.Time
	})
}

// checkTshark has tshark count the file's SIP, RTP and RTCP frames.
func checkTshark(t *testing.T, path string, want callFigures) {
	t.Helper()
	if _, err := exec.LookPath("tshark"); err != nil {
		t.Log("tshark is not installed: the exported file was checked with our own decoders only")
		return
	}
	for _, c := range []struct {
		filter string
		want   uint64
	}{
		{"rtp", want.rtpPackets()},
		{"rtcp", want.rtcp},
	} {
		out, err := exec.Command("tshark", "-r", path, "-Y", c.filter).Output()
		if err != nil {
			t.Fatalf("tshark -Y %s: %v", c.filter, err)
		}
		if got := uint64(strings.Count(string(out), "\n")); got != c.want {
			t.Errorf("tshark -r %s -Y %s: %d frames, want %s", filepath.Base(path), c.filter, got, strconv.FormatUint(c.want, 10))
		}
	}
}
