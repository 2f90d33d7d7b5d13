package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// benchCodes are the final codes the benchmark's INVITEs get, in turn.
var benchCodes = []int{200, 486, 404, 200, 503, 200, 487, 200, 480}

// writeInviteCapture writes n INVITE dialogs (INVITE and a final answer)
// from users 1000..9999, so a filter such as from_user ~ "^14" matches a
// ninth of them.
func writeInviteCapture(b testing.TB, path string, n int) {
	b.Helper()
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	bw := bufio.NewWriterSize(f, 1<<20)
	w := pcapgo.NewWriter(bw)
	if err := w.WriteFileHeader(65535, layers.LinkTypeEthernet); err != nil {
		b.Fatal(err)
	}
	a, c := net.IPv4(10, 2, 0, 1).To4(), net.IPv4(10, 2, 0, 2).To4()
	eth := &layers.Ethernet{SrcMAC: net.HardwareAddr{2, 0, 0, 0, 2, 1}, DstMAC: net.HardwareAddr{2, 0, 0, 0, 2, 2}, EthernetType: layers.EthernetTypeIPv4}
	sb := gopacket.NewSerializeBuffer()
	at := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	for i := range n {
		user := 1000 + i%9000
		hdr := fmt.Sprintf("Via: SIP/2.0/UDP 10.2.0.1:5060;branch=z9hG4bKb%d\r\nFrom: <sip:%d@10.2.0.1>;tag=a\r\nTo: <sip:2000@10.2.0.2>%%s\r\nCall-ID: bench-%d@10.2.0.1\r\nCSeq: 1 INVITE\r\nContent-Length: 0\r\n\r\n", i, user, i)
		code := benchCodes[i%len(benchCodes)]
		for _, m := range []struct {
			src, dst net.IP
			text     string
		}{
			{a, c, "INVITE sip:2000@10.2.0.2 SIP/2.0\r\n" + fmt.Sprintf(hdr, "")},
			{c, a, fmt.Sprintf("SIP/2.0 %d X\r\n", code) + fmt.Sprintf(hdr, ";tag=b")},
		} {
			ip := &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolUDP, SrcIP: m.src, DstIP: m.dst}
			udp := &layers.UDP{SrcPort: 5060, DstPort: 5060}
			_ = udp.SetNetworkLayerForChecksum(ip)
			if err := gopacket.SerializeLayers(sb, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, eth, ip, udp, gopacket.Payload(m.text)); err != nil {
				b.Fatal(err)
			}
			at = at.Add(time.Millisecond)
			if err := w.WritePacket(gopacket.CaptureInfo{Timestamp: at, CaptureLength: len(sb.Bytes()), Length: len(sb.Bytes())}, sb.Bytes()); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := bw.Flush(); err != nil {
		b.Fatal(err)
	}
}

// cpuSeconds is a process's user+system CPU time from /proc.
func cpuSeconds(pid int) float64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndex(s, ")")+2:])
	u, _ := strconv.ParseFloat(f[11], 64)
	k, _ := strconv.ParseFloat(f[12], 64)
	return (u + k) / 100 // clock ticks (USER_HZ is 100 on Linux)
}

// benchDaemon is a fieldtapd loaded with the benchmark capture, reached
// over one transport.
type benchDaemon struct {
	cmd *exec.Cmd
	s   *sdk.ClientSession
}

func startBench(b *testing.B, transport, capture string) *benchDaemon {
	b.Helper()
	ctx := context.Background()
	cfg := filepath.Join(b.TempDir(), "fieldtapd.toml")
	if err := os.WriteFile(cfg, []byte(wholeBudget), 0o644); err != nil {
		b.Fatal(err)
	}
	args := []string{"--config", cfg, "--board", "none", "--source", capture, "--mcp-rate-limit-per-peer", "0", "--mcp-transport", transport}
	var cmd *exec.Cmd
	var tr sdk.Transport
	switch transport {
	case "stdio":
		cmd = exec.Command(binary, append(args, "--log-level", "warn")...)
		tr = &sdk.CommandTransport{Command: cmd}
	default:
		// Info level: the listen line names the URL.
		cmd = exec.Command(binary, append(args, "--mcp-listen", "127.0.0.1:0")...)
		pr, pw := io.Pipe()
		cmd.Stderr = pw
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		re := regexp.MustCompile(`url=(http://\S+)`)
		sc := bufio.NewScanner(pr)
		url := ""
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				url = m[1]
				break
			}
		}
		go io.Copy(io.Discard, pr)
		tr = &sdk.StreamableClientTransport{Endpoint: url}
	}
	s, err := newClient().Connect(ctx, tr, nil)
	if err != nil {
		b.Fatal(err)
	}
	d := &benchDaemon{cmd: cmd, s: s}
	b.Cleanup(func() {
		s.Close()
		if cmd.Process != nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	for deadline := time.Now().Add(2 * giveUp); ; {
		res, err := s.CallTool(ctx, &sdk.CallToolParams{Name: "capture_status", Arguments: map[string]any{}})
		if err == nil && strings.Contains(res.Content[0].(*sdk.TextContent).Text, `"source_exhausted":true}`) {
			break
		}
		if time.Now().After(deadline) {
			b.Fatal("the capture never finished loading")
		}
		time.Sleep(100 * time.Millisecond)
	}
	res, err := s.CallTool(ctx, &sdk.CallToolParams{Name: "list_dialogs", Arguments: map[string]any{"limit": 1}})
	if err != nil {
		b.Fatal(err)
	}
	if want := fmt.Sprintf(`"total_matched":%d,`, wholeDialogs); !strings.Contains(res.Content[0].(*sdk.TextContent).Text, want) {
		b.Fatalf("the daemon does not hold every dialog (want %s): %.300s", want, res.Content[0].(*sdk.TextContent).Text)
	}
	return d
}

// benchWarmUp is how many calls of each case run before it is measured.
const benchWarmUp = 200

// startPeer starts tools/cmd/mcppeer (built at peer) answering with the
// text of answer over transport, and connects to it.
func startPeer(b *testing.B, peer, transport, answer string) *benchDaemon {
	b.Helper()
	var cmd *exec.Cmd
	var tr sdk.Transport
	switch transport {
	case "stdio":
		cmd = exec.Command(peer, "-answer", answer)
		tr = &sdk.CommandTransport{Command: cmd}
	default:
		cmd = exec.Command(peer, "-answer", answer, "-listen", "127.0.0.1:0")
		pr, pw := io.Pipe()
		cmd.Stderr = pw
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		re := regexp.MustCompile(`url=(http://\S+)`)
		sc := bufio.NewScanner(pr)
		url := ""
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				url = m[1]
				break
			}
		}
		go io.Copy(io.Discard, pr)
		tr = &sdk.StreamableClientTransport{Endpoint: url}
	}
	s, err := newClient().Connect(context.Background(), tr, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		s.Close()
		if cmd.Process != nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	return &benchDaemon{cmd: cmd, s: s}
}

// measureCalls runs tool on d after benchWarmUp uncounted calls (the
// first after the load pay for collecting the ingest's garbage and
// growing the buffers the calls reuse) and reports the p50 latency the
// client sees and the server's CPU per call.
func measureCalls(b *testing.B, d *benchDaemon, tool string, args map[string]any) {
	ctx := context.Background()
	for range benchWarmUp {
		if _, err := d.s.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args}); err != nil {
			b.Fatal(err)
		}
	}
	var lat []time.Duration
	cpu0 := cpuSeconds(d.cmd.Process.Pid)
	for b.Loop() {
		t0 := time.Now()
		res, err := d.s.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
		lat = append(lat, time.Since(t0))
		if err != nil || res.IsError {
			b.Fatalf("%s: %v %v", tool, err, res)
		}
	}
	cpu := cpuSeconds(d.cmd.Process.Pid) - cpu0
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(cpu*1000/float64(len(lat)), "server-cpu-ms/call")
}

// BenchmarkToolCallEndToEnd measures tools/call through the real stdio
// and HTTP transports with the go-sdk client, fieldtapd holding 100,000
// dialogs (wholeBudget keeps them all): p50 latency as the client sees
// it, and the server's CPU per call from /proc (user+system, whole
// process). The peer cases run tools/cmd/mcppeer, a minimal mcp-go
// server whose one tool returns list_dialogs' answer text as it is, over
// the same transports in the same run: the floor a Go MCP server pays
// outside its handler for that answer. scripts/bench.sh sets fieldtapd's
// CPU per list_dialogs call less the handler's own (mcp's
// BenchmarkListDialogs100k/default_page) against the peer's.
func BenchmarkToolCallEndToEnd(b *testing.B) {
	dir := b.TempDir()
	capture := filepath.Join(dir, "invites.pcap")
	writeInviteCapture(b, capture, wholeDialogs)
	peer := filepath.Join(dir, "mcppeer")
	if out, err := exec.Command("go", "build", "-o", peer, "fieldtap/tools/cmd/mcppeer").CombinedOutput(); err != nil {
		b.Fatalf("build mcppeer: %v\n%s", err, out)
	}
	answer := filepath.Join(dir, "list_dialogs.txt")
	calls := []struct {
		name string
		tool string
		args map[string]any
	}{
		{name: "capture_status", tool: "capture_status", args: map[string]any{}},
		{name: "list_dialogs", tool: "list_dialogs", args: map[string]any{}},
		{name: "list_dialogs_filtered", tool: "list_dialogs", args: map[string]any{"filter": `final_code >= 400 and from_user ~ "^14"`}},
		// The site-wide answers (issue #39): every dialog is looked at.
		{name: "find_problems", tool: "find_problems", args: map[string]any{}},
		{name: "aggregate_dialogs", tool: "aggregate_dialogs", args: map[string]any{"dimension": "final_code"}},
		{name: "group_dialogs", tool: "group_dialogs", args: map[string]any{"dimension": "final_code"}},
	}
	for _, transport := range []string{"stdio", "http"} {
		d := startBench(b, transport, capture)
		if _, err := os.Stat(answer); err != nil {
			res, err := d.s.CallTool(context.Background(), &sdk.CallToolParams{Name: "list_dialogs", Arguments: map[string]any{}})
			if err != nil || res.IsError {
				b.Fatalf("list_dialogs: %v %v", err, res)
			}
			if err := os.WriteFile(answer, []byte(res.Content[0].(*sdk.TextContent).Text), 0o644); err != nil {
				b.Fatal(err)
			}
		}
		for _, c := range calls {
			b.Run(transport+"/"+c.name, func(b *testing.B) { measureCalls(b, d, c.tool, c.args) })
		}
		p := startPeer(b, peer, transport, answer)
		b.Run("peer/"+transport+"/list_dialogs_answer", func(b *testing.B) { measureCalls(b, p, "answer", map[string]any{}) })
	}
}
