package sipgen

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// problems selects what Wireshark could not dissect cleanly; with checksum
// validation on, a wrong IPv4 or UDP checksum is an error too.
const problems = `_ws.malformed || _ws.expert.severity >= "error"`

// tshark returns the frame numbers that filter selects in file.
func tshark(t *testing.T, file, filter string, extra ...string) []string {
	t.Helper()
	args := append([]string{"-n", "-r", file,
		"-o", "ip.check_checksum:TRUE", "-o", "udp.check_checksum:TRUE"}, extra...)
	args = append(args, "-Y", filter, "-T", "fields", "-e", "frame.number")
	var stderr bytes.Buffer
	cmd := exec.Command("tshark", args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("tshark %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return strings.Fields(string(out))
}

func writeFile(t *testing.T, name string, ps []Packet) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := pcapgo.NewNgWriter(f, layers.LinkTypeEthernet)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		ci := gopacket.CaptureInfo{Timestamp: p.Time, CaptureLength: len(p.Data), Length: len(p.Data)}
		if err := w.WritePacket(ci, p.Data); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestTshark has Wireshark's dissectors check a generated capture: nothing
// malformed, every INVITE seen as one, every RTP packet decoded as RTP.
func TestTshark(t *testing.T) {
	if _, err := exec.LookPath("tshark"); err != nil {
		t.Skip("tshark not on PATH (apt-get install tshark): Wireshark cross-check skipped")
	}
	o := Options{Seed: 31, Start: t0, Duration: 2 * time.Minute, Calls: 12}
	path := filepath.Join(t.TempDir(), "calls.pcapng")
	var b bytes.Buffer
	if err := WritePcapng(&b, o); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	ps := collect(t, o)
	streams := rtpStreams(t, ps)
	var rtp, events, onPort int
	// One call's media port, for a -d decode-as rule.
	port := streams[slices.Min(slices.Collect(maps.Keys(streams)))][0].dstPort
	for _, s := range streams {
		rtp += len(s)
		for _, p := range s {
			if p.pt == ptEvent {
				events++
			}
			if p.srcPort == port || p.dstPort == port {
				onPort++
			}
		}
	}

	// The filter must catch a broken packet, or its silence proves nothing.
	broken := append([]Packet(nil), ps...)
	broken[0].Data = bytes.Clone(broken[0].Data)
	broken[0].Data[len(broken[0].Data)-1] ^= 0xff
	if got := tshark(t, writeFile(t, "broken.pcapng", broken), problems); len(got) != 1 || got[0] != "1" {
		t.Fatalf("filter %s on a capture with frame 1 corrupted selects %v, want [1]", problems, got)
	}

	tests := []struct {
		name   string
		filter string
		extra  []string
		want   int
	}{
		{name: "no problems", filter: problems, want: 0},
		{name: "INVITEs", filter: `sip.Method == "INVITE"`, want: o.Calls},
		{name: "RTP from SDP", filter: "rtp", want: rtp},
		// Without SIP, nothing announces the media: RTP needs the heuristic.
		{name: "RTP unannounced", filter: "rtp", extra: []string{"--disable-protocol", "sip"}, want: 0},
		{name: "RTP by heuristic", filter: "rtp", extra: []string{"--disable-protocol", "sip", "-o", "rtp.heuristic_rtp:TRUE"}, want: rtp},
		{name: "RTP by decode-as", filter: "rtp", extra: []string{"--disable-protocol", "sip", "-d", fmt.Sprintf("udp.port==%d,rtp", port)}, want: onPort},
		{name: "DTMF events", filter: "rtpevent", want: events},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tshark(t, path, tc.filter, tc.extra...); len(got) != tc.want {
				t.Fatalf("tshark -Y '%s' %v selects %d frames, want %d (first: %.10v)", tc.filter, tc.extra, len(got), tc.want, got)
			}
		})
	}
}
