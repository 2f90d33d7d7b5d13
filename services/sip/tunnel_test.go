package sip

import (
	"fmt"
	"maps"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"fieldtap/drivers/pcapfile"
	"fieldtap/services/netdecode"
	"fieldtap/tools/refdata"
)

// TestTunnelSIPMatchesTshark: SIP the Linux kernel carried in VXLAN
// (services/netdecode/testdata/tunnels, made by make-kernel.sh there) is
// analysed as on a local SPAN port: the requests and responses, by method
// and by status and CSeq method, are tshark's decode of the same file.
func TestTunnelSIPMatchesTshark(t *testing.T) {
	if _, err := exec.LookPath("tshark"); err != nil {
		t.Skip("tshark is not installed: it is the reference for the tunnel captures (.ci/run installs it)")
	}
	for _, tc := range []struct {
		file   string
		ports  []uint16
		tshark []string
	}{
		{file: "kernel-vxlan.pcap"},
		{file: "kernel-vxlan6.pcap"},
		{file: "kernel-vxlan8472.pcap", ports: []uint16{8472}, tshark: []string{"-d", "udp.port==8472,vxlan"}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			path := filepath.Join("..", "netdecode", "testdata", "tunnels", tc.file)
			st := newStore(t, Limits{})
			a := NewAnalyser(st, netdecode.Options{VXLANPorts: tc.ports})
			refdata.EachRecord(t, path, func(rec pcapfile.Record) { a.Feed(rec.Time, rec.Link, rec.Data) })
			snap := st.Snapshot()
			args := append([]string{"-r", path}, tc.tshark...)
			args = append(args, "-Y", "sip", "-T", "fields", "-E", "occurrence=a", "-E", "aggregator=;",
				"-e", "sip.Method", "-e", "sip.Status-Code", "-e", "sip.CSeq.method")
			out, err := exec.Command("tshark", args...).Output()
			if err != nil {
				t.Fatalf("tshark %v: %v", args, err)
			}
			req, resp := map[string]uint64{}, map[string]uint64{}
			var n int
			for line := range strings.Lines(string(out)) {
				f := strings.Split(strings.TrimRight(line, "\n"), "\t")
				// A TCP segment may hold several messages, each field
				// aggregated in order; no frame here mixes requests and
				// responses, which would leave them unpaired.
				methods, codes, cseqs := strings.Split(f[0], ";"), strings.Split(f[1], ";"), strings.Split(f[2], ";")
				switch {
				case f[0] != "" && f[1] != "":
					t.Fatalf("tshark: a frame with requests and responses: %q", line)
				case f[1] != "":
					for i, c := range codes {
						resp[fmt.Sprintf("%s %s", c, cseqs[i])]++
					}
				default:
					for _, m := range methods {
						req[m]++
					}
				}
				n += len(cseqs)
			}
			if n == 0 {
				t.Fatal("tshark decodes no SIP in " + tc.file)
			}
			if !maps.Equal(snap.Stats.Requests, req) || !maps.Equal(snap.Stats.Responses, resp) {
				t.Errorf("requests %v responses %v; tshark (%d messages) %v %v", snap.Stats.Requests, snap.Stats.Responses, n, req, resp)
			}
			if _, ds := a.Stats(); ds.Tunnels[netdecode.TunnelVXLAN] == 0 || ds.Skipped[netdecode.SkipTunnel] != 0 {
				t.Errorf("decoder: tunnels %v, skipped %v", ds.Tunnels, ds.Skipped)
			}
		})
	}
}
