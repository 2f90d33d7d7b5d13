package main

// Coverage through the real binary (issue #33): a capture with more
// dialogs than the budget holds, every read-only tool called, and each
// answer's coverage block checked against the ports' and stores' own
// counters as capture_status reports them.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"fieldtap/drivers/wire"
)

// statusCounters is what capture_status says of ports and stores.
type statusCounters struct {
	Data struct {
		Ports []struct {
			Name     string `json:"name"`
			State    string `json:"state"`
			Restarts uint64 `json:"restarts"`
		} `json:"ports"`
		MemoryBudget struct {
			Stores []struct {
				Store   string `json:"store"`
				Port    string `json:"port"`
				Items   uint64 `json:"items"`
				Evicted uint64 `json:"evicted"`
			} `json:"stores"`
		} `json:"memory_budget"`
	} `json:"data"`
}

type answerCoverage struct {
	OK       bool     `json:"ok"`
	Warnings []string `json:"warnings"`
	Page     *struct {
		TotalMatched int `json:"total_matched"`
	} `json:"page"`
	Coverage *struct {
		Complete bool `json:"complete"`
		Ports    []struct {
			Port     string            `json:"port"`
			State    string            `json:"state"`
			Restarts uint64            `json:"restarts"`
			Lost     map[string]uint64 `json:"lost"`
		} `json:"ports"`
		Stores []struct {
			Store   string `json:"store"`
			Port    string `json:"port"`
			Seen    uint64 `json:"seen"`
			Held    uint64 `json:"held"`
			Evicted uint64 `json:"evicted"`
			Refused uint64 `json:"refused"`
		} `json:"stores"`
	} `json:"coverage"`
}

// evictingDialogs is more INVITE dialogs than the smallest budget's
// dialog store holds, so the store must evict.
const evictingDialogs = 40000

func TestCoverageInEveryAnswerMatchesTheCounters(t *testing.T) {
	dir := t.TempDir()
	capture := filepath.Join(dir, "invites.pcap")
	writeInviteCapture(t, capture, evictingDialogs)
	cfg := writeFile(t, filepath.Join(dir, "fieldtapd.toml"), []byte("memory_limit_mib = 32\n"))
	cc := startContract(t, "--config", cfg, "--board", "none", "--source", capture, "--mcp-bundles", goldenBundles)
	cc.waitExhausted()

	env, _ := cc.call("capture_status", map[string]any{})
	raw, _ := json.Marshal(env)
	var st statusCounters
	if err := json.Unmarshal(raw, &st); err != nil {
		t.Fatal(err)
	}
	evicted := false
	for _, s := range st.Data.MemoryBudget.Stores {
		evicted = evicted || (s.Store == "sip_dialogs" && s.Evicted > 0)
	}
	if !evicted {
		t.Fatalf("the dialog store evicted nothing at 32 MiB with %d dialogs: the test shows no eviction", evictingDialogs)
	}

	checked := 0
	cc.everyTool(goldenFixed, func(tool string, blocks []string) {
		var a answerCoverage
		if err := json.Unmarshal([]byte(blocks[0]), &a); err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		offers := strings.Contains(fmt.Sprint(cc.tools[tool].OutputSchema), "coverage")
		if !a.OK || !offers {
			if a.Coverage != nil {
				t.Errorf("%s: coverage on an answer whose tool reads no captured data or that failed", tool)
			}
			return
		}
		if a.Coverage == nil {
			t.Errorf("%s: an answer of a tool that reads captured data has no coverage block", tool)
			return
		}
		checked++
		for _, p := range a.Coverage.Ports {
			for _, sp := range st.Data.Ports {
				if sp.Name == p.Port && (sp.State != p.State || sp.Restarts != p.Restarts) {
					t.Errorf("%s: port %s %s/%d restarts, capture_status says %s/%d", tool, p.Port, p.State, p.Restarts, sp.State, sp.Restarts)
				}
			}
		}
		for _, s := range a.Coverage.Stores {
			if s.Seen != s.Held+s.Evicted+s.Refused {
				t.Errorf("%s: %s seen %d != held %d + evicted %d + refused %d", tool, s.Store, s.Seen, s.Held, s.Evicted, s.Refused)
			}
			found := false
			for _, ss := range st.Data.MemoryBudget.Stores {
				if ss.Store == s.Store && ss.Port == s.Port {
					found = true
					if ss.Items != s.Held || ss.Evicted != s.Evicted {
						t.Errorf("%s: %s held %d evicted %d, capture_status says %d and %d", tool, s.Store, s.Held, s.Evicted, ss.Items, ss.Evicted)
					}
				}
			}
			if !found {
				t.Errorf("%s: store %s/%s is not in capture_status", tool, s.Store, s.Port)
			}
			if s.Store == "sip_dialogs" && s.Evicted > 0 {
				if a.Coverage.Complete {
					t.Errorf("%s: complete over a dialog store that evicted %d", tool, s.Evicted)
				}
				if !strings.Contains(strings.Join(a.Warnings, " "), "evicted") {
					t.Errorf("%s: no warning of the eviction: %q", tool, a.Warnings)
				}
			}
		}
		if tool == "list_dialogs" {
			for _, s := range a.Coverage.Stores {
				if s.Store == "sip_dialogs" && (a.Page == nil || uint64(a.Page.TotalMatched) != s.Held || s.Seen != evictingDialogs) {
					t.Errorf("list_dialogs: %d dialogs matched, coverage says held %d of %d seen, the capture has %d", a.Page.TotalMatched, s.Held, s.Seen, evictingDialogs)
				}
			}
		}
	})
	if checked < 20 {
		t.Errorf("only %d answers carried coverage", checked)
	}
}

// broadcastLog is a car's bus with no diagnostic session: two ordinary
// ids and, every 100 ms, a periodic status frame on 0x7BC, an id in the
// ISO-TP range, whose first byte looks like a PCI (issue #33's case).
func broadcastLog() []byte {
	var b []byte
	start := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	for i := range 300 {
		at := start.Add(time.Duration(i) * 100 * time.Millisecond)
		b = wire.AppendCandump(b, at, "can0", 0x1A0, []byte{byte(i), 0x20, 0, 0, 0x5A, 0, 0, 0})
		b = wire.AppendCandump(b, at.Add(5*time.Millisecond), "can0", 0x7BC, []byte{0x07, byte(i % 0x40), 0x00, 0x3C, 0xFF, 0x00, 0x12, byte(i)})
	}
	return b
}

// TestSuspensionsReachTheAnswers: the ISO-TP listener's rejection of a
// broadcast id rides in uds_services' coverage as a suspension, with a
// warning, without making the answer incomplete.
func TestSuspensionsReachTheAnswers(t *testing.T) {
	dir := t.TempDir()
	log := writeFile(t, filepath.Join(dir, "car.log"), broadcastLog())
	cc := startContract(t, "--board", "none", "--source", log, "--mcp-bundles", "server,can,uds")
	cc.waitExhausted()
	env, blocks := cc.call("uds_services", map[string]any{})
	if env["ok"] != true {
		t.Fatalf("uds_services: %v", env["errors"])
	}
	var a struct {
		Warnings []string `json:"warnings"`
		Coverage struct {
			Complete    bool `json:"complete"`
			Suspensions []struct {
				Cause string `json:"cause"`
				Count uint64 `json:"count"`
			} `json:"suspensions"`
		} `json:"coverage"`
	}
	if err := json.Unmarshal([]byte(blocks[0]), &a); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, s := range a.Coverage.Suspensions {
		found = found || (strings.HasPrefix(s.Cause, "isotp_rejected_") && s.Count > 0)
	}
	if !found || !strings.Contains(strings.Join(a.Warnings, " "), "not read as diagnostics") {
		t.Errorf("no ISO-TP rejection in uds_services' coverage: %+v, warnings %q", a.Coverage, a.Warnings)
	}
	if !a.Coverage.Complete {
		t.Errorf("a rejection made the answer incomplete: %+v", a.Coverage)
	}
}

// tunnelCapture is remote SPAN as a switch sends it: SIP INVITEs inside
// GRE (Transparent Ethernet Bridging), which the box opens, or inside
// EtherIP (RFC 3378), which it does not.
func tunnelCapture(t *testing.T, path string, n int, proto layers.IPProtocol) {
	t.Helper()
	var buf bytes.Buffer
	w := pcapgo.NewWriter(&buf)
	if err := w.WriteFileHeader(65535, layers.LinkTypeEthernet); err != nil {
		t.Fatal(err)
	}
	mac := net.HardwareAddr{2, 0, 0, 0, 0, 1}
	at := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	for i := range n {
		sip := fmt.Sprintf("INVITE sip:2000@10.9.0.2 SIP/2.0\r\nVia: SIP/2.0/UDP 10.9.0.1;branch=z9hG4bK%d\r\nFrom: <sip:1000@10.9.0.1>;tag=a\r\nTo: <sip:2000@10.9.0.2>\r\nCall-ID: gre-%d\r\nCSeq: 1 INVITE\r\nContent-Length: 0\r\n\r\n", i, i)
		inner := []gopacket.SerializableLayer{
			&layers.Ethernet{SrcMAC: mac, DstMAC: mac, EthernetType: layers.EthernetTypeIPv4},
			&layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolUDP, SrcIP: net.IPv4(10, 9, 0, 1), DstIP: net.IPv4(10, 9, 0, 2)},
		}
		udp := &layers.UDP{SrcPort: 5060, DstPort: 5060}
		_ = udp.SetNetworkLayerForChecksum(inner[1].(*layers.IPv4))
		ib := gopacket.NewSerializeBuffer()
		if err := gopacket.SerializeLayers(ib, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, append(inner, udp, gopacket.Payload(sip))...); err != nil {
			t.Fatal(err)
		}
		var tunnel gopacket.SerializableLayer = &layers.GRE{Protocol: layers.EthernetTypeTransparentEthernetBridging}
		if proto == layers.IPProtocolEtherIP {
			tunnel = gopacket.Payload{0x30, 0} // EtherIP version 3
		}
		ob := gopacket.NewSerializeBuffer()
		if err := gopacket.SerializeLayers(ob, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true},
			&layers.Ethernet{SrcMAC: mac, DstMAC: mac, EthernetType: layers.EthernetTypeIPv4},
			&layers.IPv4{Version: 4, TTL: 64, Protocol: proto, SrcIP: net.IPv4(192, 0, 2, 1), DstIP: net.IPv4(192, 0, 2, 2)},
			tunnel, gopacket.Payload(ib.Bytes())); err != nil {
			t.Fatal(err)
		}
		at = at.Add(10 * time.Millisecond)
		if err := w.WritePacket(gopacket.CaptureInfo{Timestamp: at, CaptureLength: len(ob.Bytes()), Length: len(ob.Bytes())}, ob.Bytes()); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, path, buf.Bytes())
}

// TestSkippedTunnelIsSaid: SIP inside a tunnel the box does not open is
// not silently missing: list_dialogs says none were found and why.
func TestSkippedTunnelIsSaid(t *testing.T) {
	path := filepath.Join(t.TempDir(), "etherip.pcap")
	tunnelCapture(t, path, 140, layers.IPProtocolEtherIP)
	cc := startContract(t, "--board", "none", "--source", path)
	cc.waitExhausted()
	_, blocks := cc.call("list_dialogs", map[string]any{})
	var a struct {
		Warnings []string `json:"warnings"`
		Page     struct {
			TotalMatched int `json:"total_matched"`
		} `json:"page"`
		Coverage struct {
			Complete    bool `json:"complete"`
			NotAnalysed []struct {
				Cause string `json:"cause"`
				Count uint64 `json:"count"`
			} `json:"not_analysed"`
		} `json:"coverage"`
	}
	if err := json.Unmarshal([]byte(blocks[0]), &a); err != nil {
		t.Fatal(err)
	}
	if a.Page.TotalMatched != 0 || a.Coverage.Complete || len(a.Coverage.NotAnalysed) != 1 ||
		a.Coverage.NotAnalysed[0].Cause != "tunnel_not_decoded" || a.Coverage.NotAnalysed[0].Count != 140 {
		t.Errorf("list_dialogs over 140 EtherIP-carried INVITEs: %d dialogs, coverage %+v", a.Page.TotalMatched, a.Coverage)
	}
	if !strings.Contains(strings.Join(a.Warnings, " "), "140 frames in a tunnel the box does not decode") {
		t.Errorf("warnings do not name the tunnel: %q", a.Warnings)
	}
}

// TestGRETunnelIsAnalysed: the same INVITEs in GRE are opened: every one
// is a dialog, the coverage is complete, and get_capture_report counts the
// GRE headers.
func TestGRETunnelIsAnalysed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "gre.pcap")
	tunnelCapture(t, path, 140, layers.IPProtocolGRE)
	cc := startContract(t, "--board", "none", "--source", path)
	cc.waitExhausted()
	_, blocks := cc.call("list_dialogs", map[string]any{})
	var a struct {
		Page struct {
			TotalMatched int `json:"total_matched"`
		} `json:"page"`
		Coverage struct {
			Complete bool `json:"complete"`
		} `json:"coverage"`
	}
	if err := json.Unmarshal([]byte(blocks[0]), &a); err != nil {
		t.Fatal(err)
	}
	if a.Page.TotalMatched != 140 || !a.Coverage.Complete {
		t.Errorf("list_dialogs over 140 GRE-carried INVITEs: %d dialogs, coverage %+v", a.Page.TotalMatched, a.Coverage)
	}
	_, blocks = cc.call("get_capture_report", map[string]any{})
	var r tunnelReport
	if err := json.Unmarshal([]byte(blocks[0]), &r); err != nil {
		t.Fatal(err)
	}
	if dec := r.Data.Decode; dec.Tunnels["gre"] != 140 || dec.Skipped["tunnel_not_decoded"] != 0 {
		t.Errorf("get_capture_report decode: tunnels %v, skipped %v", dec.Tunnels, dec.Skipped)
	}
}
