package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// tunnelReport is what the tunnel tests read of get_capture_report.
type tunnelReport struct {
	Data struct {
		Store struct {
			Dialogs int `json:"dialogs"`
		} `json:"store"`
		Decode struct {
			Tunnels map[string]uint64 `json:"tunnels"`
			Skipped map[string]uint64 `json:"skipped"`
		} `json:"decode"`
	} `json:"data"`
}

// TestVXLANPortsFromConfiguration: SIP the Linux kernel carried in VXLAN
// on port 8472 (services/netdecode/testdata/tunnels, make-kernel.sh) is
// read only when vxlan_ports names that port: then both calls in it are
// dialogs, as tshark decodes them (services/sip TestTunnelSIPMatchesTshark
// holds the message counts), and get_capture_report counts the VXLAN
// headers; with the default port the datagrams are UDP to 8472 and no
// dialog is found.
func TestVXLANPortsFromConfiguration(t *testing.T) {
	capture, err := filepath.Abs(filepath.Join("..", "..", "..", "services", "netdecode", "testdata", "tunnels", "kernel-vxlan8472.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		ports   string
		dialogs int
		vxlan   uint64
	}{
		{name: "default port", ports: "[4789]", dialogs: 0, vxlan: 0},
		{name: "port 8472 configured", ports: "[4789, 8472]", dialogs: 2, vxlan: 428},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := filepath.Join(t.TempDir(), "fieldtapd.toml")
			if err := os.WriteFile(cfg, []byte("vxlan_ports = "+tc.ports+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			cc := startContract(t, "--config", cfg, "--board", "none", "--source", capture)
			cc.waitExhausted()
			_, blocks := cc.call("get_capture_report", map[string]any{})
			var r tunnelReport
			if err := json.Unmarshal([]byte(blocks[0]), &r); err != nil {
				t.Fatal(err)
			}
			if r.Data.Store.Dialogs != tc.dialogs || r.Data.Decode.Tunnels["vxlan"] != tc.vxlan {
				t.Errorf("vxlan_ports = %s: %d dialogs, tunnels %v; want %d dialogs, %d VXLAN headers",
					tc.ports, r.Data.Store.Dialogs, r.Data.Decode.Tunnels, tc.dialogs, tc.vxlan)
			}
		})
	}
}

// TestVXLANSpanInNetns is remote SPAN on the real path: a kernel vxlan
// device in the peer namespace sends SIP INVITEs to an overlay address
// behind the box, the kernel encapsulates them in VXLAN to the box's
// underlay address, and fieldtapd's afpacket port on the box's veth end
// (no tunnel device there, as at a collector) decodes them: every INVITE
// sent is a dialog, and get_capture_report counts the VXLAN headers.
func TestVXLANSpanInNetns(t *testing.T) {
	box, peer, dev := spanNetwork(t)
	const (
		overlayPeer = "10.232.0.1"
		overlayBox  = "10.232.0.2"
		invites     = 20
	)
	if out, err := exec.Command("ip", "-n", peer, "link", "add", "vx0", "type", "vxlan", "id", "42",
		"local", spanPeerAddr, "remote", spanBoxAddr, "dstport", "4789").CombinedOutput(); err != nil {
		t.Skipf("the kernel makes no vxlan device here: %v %s", err, out)
	}
	sh(t, "ip", "-n", peer, "addr", "add", overlayPeer+"/24", "dev", "vx0")
	sh(t, "ip", "-n", peer, "link", "set", "vx0", "up")
	// Nothing answers ARP inside the tunnel at the box: a static neighbour.
	sh(t, "ip", "-n", peer, "neigh", "add", overlayBox, "lladdr", "02:00:0a:e8:00:02", "dev", "vx0")
	ctx, cancel := context.WithTimeout(context.Background(), 2*giveUp)
	defer cancel()
	s, _ := spanBox(t, ctx, box, fmt.Sprintf("board = \"none\"\n[[port]]\nname = %q\ndriver = \"afpacket\"\ndevice = %q\n", spanCaptureDev, dev))
	caller, err := udpIn(peer, overlayPeer+":5060")
	if err != nil {
		t.Fatal(err)
	}
	defer caller.Close()
	to := &net.UDPAddr{IP: net.ParseIP(overlayBox), Port: 5060}
	var report tunnelReport
	// The port opens asynchronously: send rounds until one is all seen.
	deadline := time.Now().Add(giveUp)
	for round := 0; ; round++ {
		for i := range invites {
			msg := fmt.Sprintf("INVITE sip:2002@%s SIP/2.0\r\nVia: SIP/2.0/UDP %s:5060;branch=z9hG4bKvx%d-%d\r\nFrom: <sip:1001@%s>;tag=a\r\nTo: <sip:2002@%s>\r\nCall-ID: vxlan-%d-%d\r\nCSeq: 1 INVITE\r\nContent-Length: 0\r\n\r\n",
				overlayBox, overlayPeer, round, i, overlayPeer, overlayBox, round, i)
			if _, err := caller.WriteToUDP([]byte(msg), to); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(200 * time.Millisecond)
		var got struct {
			Page struct {
				TotalMatched int `json:"total_matched"`
			} `json:"page"`
		}
		callTool(t, ctx, s, "list_dialogs", map[string]any{"filter": fmt.Sprintf("call_id ~ \"^vxlan-%d-\"", round), "limit": 100}, &got)
		if got.Page.TotalMatched == invites {
			callTool(t, ctx, s, "get_capture_report", map[string]any{}, &report)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %v only %d of %d VXLAN-carried INVITEs listed", giveUp, got.Page.TotalMatched, invites)
		}
	}
	if dec := report.Data.Decode; dec.Tunnels["vxlan"] < invites || dec.Skipped["tunnel_not_decoded"] != 0 {
		t.Errorf("get_capture_report decode: tunnels %v, skipped %v", dec.Tunnels, dec.Skipped)
	}
}

// TestTunnelsByPort: two ports share one decoder, and capture_status
// splits its tunnel counts by the port whose frames opened them. tshark
// counts 430 VXLAN frames in kernel-vxlan.pcap and 40 GRE frames in
// zeek-gre-sample.pcap (`tshark -Y vxlan`, `-Y gre`; one header each);
// the ports' shares add up to get_capture_report's decode.tunnels.
func TestTunnelsByPort(t *testing.T) {
	dir, err := filepath.Abs(filepath.Join("..", "..", "..", "services", "netdecode", "testdata", "tunnels"))
	if err != nil {
		t.Fatal(err)
	}
	cc := startContract(t, "--board", "none",
		"--source", filepath.Join(dir, "kernel-vxlan.pcap"), "--source", filepath.Join(dir, "zeek-gre-sample.pcap"))
	cc.waitExhausted()
	_, blocks := cc.call("capture_status", map[string]any{})
	var st struct {
		Data struct {
			Ports []struct {
				Source  string            `json:"source"`
				Tunnels map[string]uint64 `json:"tunnels"`
			} `json:"ports"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(blocks[0]), &st); err != nil {
		t.Fatal(err)
	}
	want := map[string]map[string]uint64{"kernel-vxlan.pcap": {"vxlan": 430}, "zeek-gre-sample.pcap": {"gre": 40}}
	sum := map[string]uint64{}
	for _, p := range st.Data.Ports {
		w := want[filepath.Base(p.Source)]
		if fmt.Sprint(p.Tunnels) != fmt.Sprint(w) {
			t.Errorf("port %s: tunnels %v, want %v", p.Source, p.Tunnels, w)
		}
		for k, n := range p.Tunnels {
			sum[k] += n
		}
	}
	_, blocks = cc.call("get_capture_report", map[string]any{})
	var r tunnelReport
	if err := json.Unmarshal([]byte(blocks[0]), &r); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(sum) != fmt.Sprint(r.Data.Decode.Tunnels) {
		t.Errorf("ports' tunnels add up to %v; the decoder counted %v", sum, r.Data.Decode.Tunnels)
	}
}
