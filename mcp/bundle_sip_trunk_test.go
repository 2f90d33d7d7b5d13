package mcp

import (
	"net/netip"
	"path/filepath"
	"testing"
	"time"

	"fieldtap/drivers/pcapfile"
	"fieldtap/services/netdecode"
	"fieldtap/services/sip"
	"fieldtap/services/trunk"
	"fieldtap/tools/refdata"
)

// TestTrunkHealthOnTheReferenceCaptures: the SIP/TCP and SIP/TLS 1.3
// reference captures through one analyser and table, as the daemon wires
// them, and a ClientHello naming a server on 5061: trunk_health answers
// a row each, the TLS 1.3 flow with tshark's version and cipher suite
// (services/trunk checks them against tshark) and its certificate said
// unseen, the server name fenced; problems_only keeps the flow with a
// reset; pages follow the cursor.
func TestTrunkHealthOnTheReferenceCaptures(t *testing.T) {
	dir := refdata.Dir(t, "sip")
	st, _ := sip.New(sip.Limits{})
	an := sip.NewAnalyser(st, netdecode.Options{})
	tb := trunk.New(trunk.Options{})
	an.SetTCPHook(tb)
	for _, f := range []string{"SIP-Call-Flow-Over-TCP.pcap", "gen-sipp-hold-resume-tls13-with-keys.pcapng"} {
		refdata.EachRecord(t, filepath.Join(dir, f), func(rec pcapfile.Record) { an.Feed(rec.Time, rec.Link, rec.Data) })
	}
	// A ClientHello naming sip.example.test, on a third connection.
	cli, srv := netip.MustParseAddrPort("10.9.0.1:40000"), netip.MustParseAddrPort("10.9.0.2:5061")
	at := time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC)
	tb.Segment(netdecode.Segment{Time: at, Src: cli, Dst: srv, Flags: netdecode.FlagSYN, Window: 1000})
	hello := clientHello("sip.example.test")
	tb.TLS(&netdecode.Stream{Src: cli, Dst: srv}, at, hello)

	d := testDeps()
	d.Trunk = tb
	h := newHarnessOf(t, d, sipSiteTools...)
	rows := items(h.ok("trunk_health", nil))
	if len(rows) != 3 {
		t.Fatalf("%d rows, want 3", len(rows))
	}
	if rows[0]["server"] != "10.33.6.101:5060" || rows[0]["tls"] != nil {
		t.Errorf("SIP/TCP row %v", rows[0])
	}
	tls := rows[1]["tls"].(map[string]any)
	if tls["outcome"] != "completed" || tls["version"] != "TLS 1.3" || tls["cipher_suite"] != "TLS_AES_256_GCM_SHA384" ||
		tls["sni"] != nil || tls["certificate"] != nil || tls["certificate_note"] != "TLS 1.3 encrypts the certificate: it cannot be seen without keys" {
		t.Errorf("TLS 1.3 row %v", tls)
	}
	if c := rows[1]["from_client"].(map[string]any); c["resets"] != 1.0 {
		t.Errorf("from_client %v: want the client's one reset", c)
	}
	third := rows[2]["tls"].(map[string]any)
	if third["sni"] != fenced("sip.example.test") || third["outcome"] != "incomplete" || third["certificate_note"] != "no ServerHello was seen" {
		t.Errorf("third row %v", third)
	}
	problems := items(h.ok("trunk_health", map[string]any{"problems_only": true}))
	if len(problems) != 2 || problems[0]["flow"] != 2.0 || problems[1]["flow"] != 3.0 {
		t.Errorf("problems_only: %v, want the reset TLS 1.3 flow and the incomplete handshake", problems)
	}
	first := h.ok("trunk_health", map[string]any{"limit": 2})
	next := first["page"].(map[string]any)["next_cursor"].(string)
	rest := items(h.ok("trunk_health", map[string]any{"cursor": next}))
	if len(rest) != 1 || rest[0]["flow"] != 3.0 {
		t.Errorf("second page %v", rest)
	}
}

// clientHello is a TLS record holding a ClientHello with the SNI name.
func clientHello(name string) []byte {
	u16 := func(n int) []byte { return []byte{byte(n >> 8), byte(n)} }
	sni := append(append([]byte{0}, u16(len(name))...), name...)
	list := append(u16(len(sni)), sni...)
	ext := append(append([]byte{0, 0}, u16(len(list))...), list...)
	body := append([]byte{3, 3}, make([]byte, 32)...)
	body = append(body, 0, 0, 2, 0x13, 0x01, 1, 0)
	body = append(append(body, u16(len(ext))...), ext...)
	hs := append([]byte{1, 0, byte(len(body) >> 8), byte(len(body))}, body...)
	return append(append([]byte{22, 3, 1}, u16(len(hs))...), hs...)
}
