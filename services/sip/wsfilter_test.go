package sip

import (
	"errors"
	"net/netip"
	"os/exec"
	"path/filepath"
	"testing"

	"fieldtap/tools/refdata"
)

func TestWiresharkFilterEscapes(t *testing.T) {
	tests := []struct {
		name, callID, want string
		err                error
	}{
		{name: "plain", callID: "1-1966@10.0.2.20", want: `sip.Call-ID == "1-1966@10.0.2.20"`},
		{name: "quote and backslash", callID: `a"b\c`, want: `sip.Call-ID == "a\"b\\c"`},
		{name: "not UTF-8", callID: "a\xffb", want: `sip.Call-ID == "a\xffb"`},
		{name: "UTF-8 kept", callID: "é@h", want: `sip.Call-ID == "é@h"`},
		{name: "control character", callID: "a\x01b", err: ErrFilterControl},
		{name: "DEL", callID: "a\x7fb", err: ErrFilterControl},
		{name: "C1 control", callID: "a\u0085b", err: ErrFilterControl},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, err := WiresharkFilter(tc.callID, nil)
			if !errors.Is(err, tc.err) {
				t.Fatalf("error %v, want %v", err, tc.err)
			}
			if f.SIP != tc.want || f.All != tc.want || f.Media != "" {
				t.Errorf("filter %+v, want %s", f, tc.want)
			}
		})
	}
	flows := make([]MediaFlow, maxFilterFlows+2)
	for i := range flows {
		flows[i] = MediaFlow{Src: netip.MustParseAddrPort("[2001:db8::1]:4000"), Dst: netip.MustParseAddrPort("192.0.2.1:5000")}
	}
	if f, _ := WiresharkFilter("x", flows); f.FlowsLeftOut != 2 {
		t.Errorf("left out %d flows, want 2", f.FlowsLeftOut)
	}
}

// tshark 4.0.17 parses the escaped filters and matches a call's frames:
// sip-rtp-g711.pcap's call 1-1966@10.0.2.20 has 6 SIP messages and one
// PCMU stream 10.0.2.15:27942 → 10.0.2.20:6000 of 425 packets
// (PROVENANCE.md), 431 frames.
func TestWiresharkFilterTsharkAccepts(t *testing.T) {
	if _, err := exec.LookPath("tshark"); err != nil {
		t.Skip("tshark is not installed (apt-get install tshark)")
	}
	path := filepath.Join(refdata.Dir(t, "sip"), "sip-rtp-g711.pcap")
	frames := func(filter string) int {
		out, err := exec.Command("tshark", "-r", path, "-Y", filter, "-T", "fields", "-e", "frame.number").Output()
		if err != nil {
			t.Fatalf("tshark refused %s: %v", filter, err)
		}
		n := 0
		for _, b := range out {
			if b == '\n' {
				n++
			}
		}
		return n
	}
	flow := MediaFlow{Src: netip.MustParseAddrPort("10.0.2.15:27942"), Dst: netip.MustParseAddrPort("10.0.2.20:6000")}
	f, err := WiresharkFilter("1-1966@10.0.2.20", []MediaFlow{flow})
	if err != nil {
		t.Fatal(err)
	}
	if n := frames(f.All); n != 431 {
		t.Errorf("%s matched %d frames, want 431", f.All, n)
	}
	if n := frames(f.SIP); n != 6 {
		t.Errorf("%s matched %d frames, want 6", f.SIP, n)
	}
	for _, id := range []string{`a"b\c`, "a\xffb", "é@h"} {
		f, _ := WiresharkFilter(id, nil)
		if n := frames(f.SIP); n != 0 {
			t.Errorf("%s matched %d frames, want 0", f.SIP, n)
		}
	}
}
