package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// wholeDialogs is issue #13's capture size: the reader finishes while the
// hand-off (8,192 frames) still holds frames. wholeBudget is a memory
// budget whose SIP dialog share keeps all of them (1024 MiB keeps about
// 65,000), so an answer that counts fewer was labelled exhausted too
// soon, not evicted.
const wholeDialogs = 100_000

const wholeBudget = "memory_limit_mib = 1600\n"

// writeDialogCapture writes n OPTIONS dialogs (request and 200) as a pcap.
func writeDialogCapture(t *testing.T, path string, n int) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	bw := bufio.NewWriterSize(f, 1<<20)
	w := pcapgo.NewWriter(bw)
	if err := w.WriteFileHeader(65535, layers.LinkTypeEthernet); err != nil {
		t.Fatal(err)
	}
	a, b := net.IPv4(10, 1, 0, 1).To4(), net.IPv4(10, 1, 0, 2).To4()
	eth := &layers.Ethernet{SrcMAC: net.HardwareAddr{2, 0, 0, 0, 1, 1}, DstMAC: net.HardwareAddr{2, 0, 0, 0, 1, 2}, EthernetType: layers.EthernetTypeIPv4}
	sb := gopacket.NewSerializeBuffer()
	at := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	for i := range n {
		callID := fmt.Sprintf("whole-%d@10.1.0.1", i)
		req := "OPTIONS sip:2000@10.1.0.2 SIP/2.0\r\nVia: SIP/2.0/UDP 10.1.0.1:5060;branch=z9hG4bK" + fmt.Sprint(i) +
			"\r\nFrom: <sip:1000@10.1.0.1>;tag=a\r\nTo: <sip:2000@10.1.0.2>\r\nCall-ID: " + callID + "\r\nCSeq: 1 OPTIONS\r\nContent-Length: 0\r\n\r\n"
		resp := "SIP/2.0 200 OK\r\nVia: SIP/2.0/UDP 10.1.0.1:5060;branch=z9hG4bK" + fmt.Sprint(i) +
			"\r\nFrom: <sip:1000@10.1.0.1>;tag=a\r\nTo: <sip:2000@10.1.0.2>;tag=b\r\nCall-ID: " + callID + "\r\nCSeq: 1 OPTIONS\r\nContent-Length: 0\r\n\r\n"
		for _, m := range []struct {
			src, dst net.IP
			text     string
		}{{a, b, req}, {b, a, resp}} {
			ip := &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolUDP, SrcIP: m.src, DstIP: m.dst}
			udp := &layers.UDP{SrcPort: 5060, DstPort: 5060}
			_ = udp.SetNetworkLayerForChecksum(ip)
			if err := gopacket.SerializeLayers(sb, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, eth, ip, udp, gopacket.Payload(m.text)); err != nil {
				t.Fatal(err)
			}
			at = at.Add(time.Millisecond)
			if err := w.WritePacket(gopacket.CaptureInfo{Timestamp: at, CaptureLength: len(sb.Bytes()), Length: len(sb.Bytes())}, sb.Bytes()); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
}

// TestExhaustedAnswersAreWhole loads a 100,000-dialog capture 20 times
// and polls list_dialogs from the start: the first answer that says
// source_exhausted must count every dialog. Before the fix, 12 of 12
// runs answered with 96,052 to 99,860 dialogs labelled complete.
func TestExhaustedAnswersAreWhole(t *testing.T) {
	if testing.Short() {
		t.Skip("loads a 100,000-dialog capture 20 times")
	}
	path := filepath.Join(t.TempDir(), "dialogs.pcap")
	writeDialogCapture(t, path, wholeDialogs)
	cfg := filepath.Join(t.TempDir(), "fieldtapd.toml")
	if err := os.WriteFile(cfg, []byte(wholeBudget), 0o644); err != nil {
		t.Fatal(err)
	}
	const runs = 20
	for run := range runs {
		ctx, cancel := context.WithTimeout(context.Background(), 2*giveUp)
		cmd := exec.Command(binary, "--config", cfg, "--mcp-transport", "stdio", "--board", "none", "--source", path)
		var stderr lockedBuffer
		cmd.Stderr = &stderr
		s, err := newClient().Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
		if err != nil {
			cancel()
			t.Fatalf("connect: %v\n%s", err, stderr.String())
		}
		polls := 0
		for deadline := time.Now().Add(giveUp); ; polls++ {
			res, err := s.CallTool(ctx, &sdk.CallToolParams{Name: "list_dialogs", Arguments: map[string]any{"limit": 1}})
			if err != nil {
				t.Fatal(err)
			}
			var env struct {
				Page struct {
					TotalMatched int `json:"total_matched"`
				} `json:"page"`
				Source struct {
					Exhausted bool `json:"source_exhausted"`
				} `json:"source"`
			}
			if err := json.Unmarshal([]byte(res.Content[0].(*sdk.TextContent).Text), &env); err != nil {
				t.Fatal(err)
			}
			if env.Source.Exhausted {
				if env.Page.TotalMatched != wholeDialogs {
					t.Errorf("run %d: the first exhausted answer (poll %d) counts %d dialogs, want %d", run, polls, env.Page.TotalMatched, wholeDialogs)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("run %d: never exhausted; last total %d", run, env.Page.TotalMatched)
			}
		}
		s.Close()
		cancel()
	}
}
