package trunk

import (
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"fieldtap/drivers/pcapfile"
	"fieldtap/services/netdecode"
	"fieldtap/services/sip"
	"fieldtap/tools/refdata"
)

// feedFile runs a capture through the SIP analyser with a table on its
// TCP hook, as the daemon wires them.
func feedFile(t *testing.T, path string) *Table {
	t.Helper()
	tb := New(Options{})
	st, err := sip.New(sip.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	a := sip.NewAnalyser(st, netdecode.Options{})
	a.SetTCPHook(tb)
	refdata.EachRecord(t, path, func(rec pcapfile.Record) { a.Feed(rec.Time, rec.Link, rec.Data) })
	return tb
}

// tshark runs tshark -r path -T fields over the display filter, one
// []string of the fields per frame. It skips when tshark is absent.
func tshark(t *testing.T, path, filter string, fields ...string) [][]string {
	t.Helper()
	if _, err := exec.LookPath("tshark"); err != nil {
		t.Skip("tshark is not installed: it is the ground truth")
	}
	args := []string{"-r", path, "-Y", filter, "-T", "fields"}
	for _, f := range fields {
		args = append(args, "-e", f)
	}
	out, err := exec.Command("tshark", args...).Output()
	if err != nil {
		t.Fatalf("tshark %v: %v", args, err)
	}
	var rows [][]string
	if len(out) == 0 {
		return nil
	}
	for l := range strings.SplitSeq(strings.TrimSuffix(string(out), "\n"), "\n") {
		rows = append(rows, strings.Split(l, "\t")) // a frame whose fields are all empty is a row too
	}
	return rows
}

// tsharkCounts counts, per source address:port, the frames matching
// each filter.
func tsharkCounts(t *testing.T, path string, filters map[string]string) map[string]map[string]uint64 {
	t.Helper()
	out := map[string]map[string]uint64{}
	for name, f := range filters {
		for _, r := range tshark(t, path, f, "ip.src", "tcp.srcport") {
			src := r[0] + ":" + r[1]
			if out[src] == nil {
				out[src] = map[string]uint64{}
			}
			out[src][name]++
		}
	}
	return out
}

// ourCounts is the same view of a flow's sides.
func ourCounts(f Flow) map[string]map[string]uint64 {
	side := func(c TCPCounts) map[string]uint64 {
		m := map[string]uint64{"segments": c.Segments, "retransmission": c.Retransmissions, "fast_retransmission": c.FastRetransmissions,
			"spurious_retransmission": c.SpuriousRetransmissions, "out_of_order": c.OutOfOrder, "zero_window": c.ZeroWindows, "reset": c.Resets}
		for k, v := range m {
			if v == 0 {
				delete(m, k)
			}
		}
		return m
	}
	return map[string]map[string]uint64{f.Client.String(): side(f.FromClient), f.Server.String(): side(f.FromServer)}
}

// analysisFilters are tshark's fields for TCPCounts.
var analysisFilters = map[string]string{
	"segments":                "tcp",
	"retransmission":          "tcp.analysis.retransmission",
	"fast_retransmission":     "tcp.analysis.fast_retransmission",
	"spurious_retransmission": "tcp.analysis.spurious_retransmission",
	"out_of_order":            "tcp.analysis.out_of_order",
	"zero_window":             "tcp.analysis.zero_window",
	"reset":                   "tcp.flags.reset == 1",
}

// seg is one TCP segment a test writes to a capture.
type seg struct {
	at       time.Duration // after the capture's start
	fromCli  bool
	seq, ack uint32
	flags    string // S, A, F, R, P
	window   uint16
	payload  []byte
}

// writeCapture writes segs between cli and srv as an Ethernet pcap.
func writeCapture(t *testing.T, cli, srv netip.AddrPort, segs []seg) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "segments.pcap")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := pcapgo.NewWriter(f)
	if err := w.WriteFileHeader(65535, layers.LinkTypeEthernet); err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 12, 5, 3, 0, 0, 0, time.UTC)
	for _, s := range segs {
		src, dst := cli, srv
		if !s.fromCli {
			src, dst = srv, cli
		}
		eth := &layers.Ethernet{SrcMAC: []byte{2, 0, 0, 0, 0, 1}, DstMAC: []byte{2, 0, 0, 0, 0, 2}, EthernetType: layers.EthernetTypeIPv4}
		ip := &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolTCP, SrcIP: src.Addr().AsSlice(), DstIP: dst.Addr().AsSlice()}
		tcp := &layers.TCP{SrcPort: layers.TCPPort(src.Port()), DstPort: layers.TCPPort(dst.Port()), Seq: s.seq, Ack: s.ack, Window: s.window,
			SYN: strings.Contains(s.flags, "S"), ACK: strings.Contains(s.flags, "A"), FIN: strings.Contains(s.flags, "F"),
			RST: strings.Contains(s.flags, "R"), PSH: strings.Contains(s.flags, "P")}
		if err := tcp.SetNetworkLayerForChecksum(ip); err != nil {
			t.Fatal(err)
		}
		buf := gopacket.NewSerializeBuffer()
		if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, eth, ip, tcp, gopacket.Payload(s.payload)); err != nil {
			t.Fatal(err)
		}
		b := buf.Bytes()
		if err := w.WritePacket(gopacket.CaptureInfo{Timestamp: start.Add(s.at), CaptureLength: len(b), Length: len(b)}, b); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// segmentOf is a pure ACK from src to dst at t.
func segmentOf(src, dst netip.AddrPort, at time.Time) netdecode.Segment {
	return netdecode.Segment{Time: at, Src: src, Dst: dst, Flags: netdecode.FlagACK, Window: 1000}
}
