package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

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
			var r struct {
				Data struct {
					Store struct {
						Dialogs int `json:"dialogs"`
					} `json:"store"`
					Decode struct {
						Tunnels map[string]uint64 `json:"tunnels"`
					} `json:"decode"`
				} `json:"data"`
			}
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
