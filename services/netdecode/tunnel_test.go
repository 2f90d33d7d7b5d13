package netdecode

// Tunnel captures (testdata/tunnels, PROVENANCE.md there): VXLAN made by
// the Linux kernel here (make-kernel.sh), GRE, ERSPAN I/II/III and MPLS
// from Zeek's test traces. The reference is tshark's decode of the same
// files, run by the test: every frame's innermost UDP datagram and every
// tunnel header it opens.

import (
	"fmt"
	"maps"
	"net/netip"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"fieldtap/drivers/pcapfile"
	"fieldtap/tools/refdata"
)

var tunnelCaptures = []struct {
	file       string
	vxlanPorts []uint16
	tshark     []string // decode-as arguments tshark needs for the same reading
}{
	{file: "kernel-vxlan.pcap"},
	{file: "kernel-vxlan6.pcap"},
	{file: "kernel-vxlan8472.pcap", vxlanPorts: []uint16{DefaultVXLANPort, 8472}, tshark: []string{"-d", "udp.port==8472,vxlan"}},
	{file: "zeek-gre-sample.pcap"},
	{file: "zeek-gre-within-gre.pcap"},
	{file: "zeek-gre-pptp.pcap"},
	{file: "zeek-erspanI.pcap"},
	{file: "zeek-erspanII.pcap"},
	{file: "zeek-erspanIII.pcap"},
	{file: "zeek-gre-erspan3-dot1q.pcap"},
	{file: "zeek-mpls-in-vlan.pcap"},
	{file: "zeek-vxlan.pcap"},
}

// frameSink records each frame's datagrams by the frame's tag.
type frameSink struct {
	cur uint64
	udp map[uint64][]string
}

func (s *frameSink) UDP(d *Datagram) {
	s.udp[s.cur] = append(s.udp[s.cur], d.Src.String()+">"+d.Dst.String())
}
func (s *frameSink) TCP(_ *Stream, _ time.Time, b []byte) int { return len(b) }

func decodeTunnelCapture(t *testing.T, path string, o Options) (*Decoder, *frameSink, uint64) {
	s := &frameSink{udp: map[uint64][]string{}}
	d := New(o, s)
	refdata.EachRecord(t, path, func(rec pcapfile.Record) {
		s.cur++
		d.Decode(rec.Time, rec.Link, rec.Data)
	})
	return d, s, s.cur
}

func TestTunnelCapturesMatchTshark(t *testing.T) {
	if _, err := exec.LookPath("tshark"); err != nil {
		t.Skip("tshark is not installed: it is the reference for the tunnel captures (.ci/run installs it)")
	}
	for _, tc := range tunnelCaptures {
		t.Run(tc.file, func(t *testing.T) {
			path := filepath.Join("testdata", "tunnels", tc.file)
			d, got, frames := decodeTunnelCapture(t, path, Options{VXLANPorts: tc.vxlanPorts})
			want, tunnels, notDecoded, tcp := tsharkTunnels(t, path, tc.tshark)
			if uint64(len(want)) != frames {
				t.Fatalf("tshark read %d frames, we read %d", len(want), frames)
			}
			for i, w := range want {
				if g := got.udp[uint64(i+1)]; !slices.Equal(g, w) {
					t.Errorf("frame %d: datagrams %v, tshark's innermost UDP %v", i+1, g, w)
				}
			}
			st := d.Stats()
			if !maps.Equal(st.Tunnels, tunnels) {
				t.Errorf("tunnels opened %v, tshark %v", st.Tunnels, tunnels)
			}
			if st.Skipped[SkipTunnel] != notDecoded {
				t.Errorf("tunnel_not_decoded %d, want %d (GRE carrying PPP in tshark)", st.Skipped[SkipTunnel], notDecoded)
			}
			if st.TCP.Segments != tcp {
				t.Errorf("TCP segments %d, tshark's innermost TCP %d", st.TCP.Segments, tcp)
			}
		})
	}
}

// tsharkTunnels reads tshark's decode: per frame the innermost UDP
// datagram ("src>dst", none when the frame's innermost transport is TCP,
// when it quotes a packet in ICMP, when UDP carries VXLAN, or when it is
// behind GRE carrying PPP, which the decoder does not open), the tunnel
// headers by kind, the GRE headers carrying PPP, and the frames whose
// innermost transport is TCP.
func tsharkTunnels(t *testing.T, path string, extra []string) ([][]string, map[string]uint64, uint64, uint64) {
	args := append([]string{"-r", path}, extra...)
	args = append(args, "-T", "fields", "-E", "occurrence=a", "-E", "aggregator=,",
		"-e", "frame.protocols", "-e", "erspan.version", "-e", "ip.src", "-e", "ip.dst", "-e", "ipv6.src", "-e", "ipv6.dst",
		"-e", "udp.srcport", "-e", "udp.dstport")
	out, err := exec.Command("tshark", args...).Output()
	if err != nil {
		t.Fatalf("tshark %v: %v", args, err)
	}
	var frames [][]string
	tunnels := map[string]uint64{}
	var notDecoded, tcp uint64
	last := func(s string) string { return s[strings.LastIndexByte(s, ',')+1:] }
	for line := range strings.Lines(strings.TrimRight(string(out), "\n")) {
		f := strings.Split(strings.TrimRight(line, "\n"), "\t")
		protos := strings.Split(f[0], ":")
		versions := strings.Split(f[1], ",")
		hidden := false // behind a tunnel the decoder does not open
		for i, p := range protos {
			next := ""
			if i+1 < len(protos) {
				next = protos[i+1]
			}
			switch {
			case p == "gre" && next == "erspan":
				v := versions[0]
				versions = versions[1:]
				tunnels[map[string]string{"": TunnelERSPAN1, "1": TunnelERSPAN2, "2": TunnelERSPAN3}[v]]++
			case p == "gre" && next == "ppp": // PPTP, not remote SPAN
				notDecoded++
				hidden = true
			case p == "gre":
				tunnels[TunnelGRE]++
			case p == "vxlan" || p == "mpls":
				tunnels[p]++
			}
		}
		var dgrams []string
		inner := -1
		for i, p := range protos {
			if p == "udp" || p == "tcp" {
				inner = i
			}
		}
		quoted := slices.Contains(protos, "icmp") || slices.Contains(protos, "icmpv6")
		switch {
		case inner < 0 || quoted || hidden:
		case protos[inner] == "tcp":
			tcp++
		case inner+1 < len(protos) && protos[inner+1] == "vxlan":
		default:
			src, dst := last(f[2]), last(f[3])
			if lastNet(protos[:inner]) == "ipv6" {
				src, dst = last(f[4]), last(f[5])
			}
			s := netip.AddrPortFrom(netip.MustParseAddr(src), parsePort(t, last(f[6])))
			d := netip.AddrPortFrom(netip.MustParseAddr(dst), parsePort(t, last(f[7])))
			dgrams = append(dgrams, s.String()+">"+d.String())
		}
		frames = append(frames, dgrams)
	}
	if len(tunnels) == 0 {
		tunnels = nil
	}
	return frames, tunnels, notDecoded, tcp
}

func lastNet(protos []string) string {
	for _, p := range slices.Backward(protos) {
		if p == "ip" || p == "ipv6" {
			return p
		}
	}
	return ""
}

func parsePort(t *testing.T, s string) uint16 {
	var p uint16
	if _, err := fmt.Sscan(s, &p); err != nil {
		t.Fatalf("tshark port %q: %v", s, err)
	}
	return p
}
