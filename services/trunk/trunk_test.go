package trunk

import (
	"crypto/tls"
	"fmt"
	"maps"
	"net/netip"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"fieldtap/services/netdecode"
	"fieldtap/tools/refdata"
)

// TestReferenceCapturesMatchTshark: on the SIP/TCP and SIP/TLS 1.3
// reference captures, every side's counts are tshark 4.0's, and the TLS
// flow's version, cipher suite and SNI are its ServerHello's and
// ClientHello's.
func TestReferenceCapturesMatchTshark(t *testing.T) {
	dir := refdata.Dir(t, "sip")
	for _, name := range []string{"SIP-Call-Flow-Over-TCP.pcap", "gen-sipp-hold-resume-tls13-with-keys.pcapng"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, name)
			flows, st := feedFile(t, path).Flows()
			if len(flows) != 1 || st.Evicted != 0 {
				t.Fatalf("flows %d, evicted %d: want the capture's one connection", len(flows), st.Evicted)
			}
			f := flows[0]
			want := tsharkCounts(t, path, analysisFilters)
			if got := ourCounts(f); !maps.EqualFunc(got, want, maps.Equal) {
				t.Errorf("counts per side\n got %v\nwant %v (tshark)", got, want)
			}
			if f.TLS == nil {
				return
			}
			sh := tshark(t, path, "tls.handshake.type == 2", "tls.handshake.ciphersuite", "tls.handshake.extensions.supported_version")
			ch := tshark(t, path, "tls.handshake.type == 1", "tls.handshake.extensions_server_name")
			if len(sh) != 1 || len(ch) != 1 {
				t.Fatalf("tshark: %d ServerHellos, %d ClientHellos", len(sh), len(ch))
			}
			if got := fmt.Sprintf("0x%04x", f.TLS.Cipher); got != sh[0][0] {
				t.Errorf("cipher %s (%s), tshark %s", got, tls.CipherSuiteName(f.TLS.Cipher), sh[0][0])
			}
			if got := fmt.Sprintf("0x%04x", f.TLS.Version); got != sh[0][1] {
				t.Errorf("version %s, tshark's supported_version %s", got, sh[0][1])
			}
			if f.TLS.SNI != ch[0][0] {
				t.Errorf("SNI %q, tshark %q", f.TLS.SNI, ch[0][0])
			}
			if f.Outcome() != "completed" || f.TLS.Cert != nil || f.TLS.Problem != "" {
				t.Errorf("outcome %s, certificate %v, problem %q: want a completed TLS 1.3 handshake, its certificate unseen", f.Outcome(), f.TLS.Cert, f.TLS.Problem)
			}
		})
	}
}

// TestTCPAnalysisMatchesTshark writes a SIP/TCP connection with one of
// each event (a retransmission after a timeout, an out-of-order segment,
// a spurious retransmission, a fast retransmission after duplicate ACKs,
// a keep-alive, a zero window and a reset) and checks every side's
// counts against tshark's on the same file.
func TestTCPAnalysisMatchesTshark(t *testing.T) {
	cli, srv := netip.MustParseAddrPort("10.0.0.1:40000"), netip.MustParseAddrPort("10.0.0.2:5060")
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	data := make([]byte, 100)
	segs := []seg{
		{at: 0, fromCli: true, seq: 1000, flags: "S", window: 65535},
		{at: ms(10), seq: 5000, ack: 1001, flags: "SA", window: 65535},
		{at: ms(20), fromCli: true, seq: 1001, ack: 5001, flags: "A", window: 65535},
		{at: ms(100), fromCli: true, seq: 1001, ack: 5001, flags: "PA", window: 65535, payload: data},
		{at: ms(110), seq: 5001, ack: 1101, flags: "A", window: 65535},
		{at: ms(200), fromCli: true, seq: 1101, ack: 5001, flags: "PA", window: 65535, payload: data},
		{at: ms(500), fromCli: true, seq: 1101, ack: 5001, flags: "PA", window: 65535, payload: data}, // retransmission
		{at: ms(510), seq: 5001, ack: 1201, flags: "A", window: 65535},
		{at: ms(600), fromCli: true, seq: 1301, ack: 5001, flags: "PA", window: 65535, payload: data},
		{at: ms(601), fromCli: true, seq: 1201, ack: 5001, flags: "PA", window: 65535, payload: data}, // out of order
		{at: ms(610), seq: 5001, ack: 1401, flags: "A", window: 65535},
		{at: ms(900), fromCli: true, seq: 1201, ack: 5001, flags: "PA", window: 65535, payload: data}, // spurious
		{at: ms(1000), fromCli: true, seq: 1401, ack: 5001, flags: "PA", window: 65535, payload: data},
		{at: ms(1001), fromCli: true, seq: 1501, ack: 5001, flags: "PA", window: 65535, payload: data},
		{at: ms(1002), seq: 5001, ack: 1401, flags: "A", window: 65535},
		{at: ms(1003), seq: 5001, ack: 1401, flags: "A", window: 65535},
		{at: ms(1004), seq: 5001, ack: 1401, flags: "A", window: 65535},
		{at: ms(1005), fromCli: true, seq: 1401, ack: 5001, flags: "PA", window: 65535, payload: data}, // fast
		{at: ms(1100), seq: 5001, ack: 1601, flags: "A", window: 0},                                    // zero window
		{at: ms(1200), seq: 5001, ack: 1601, flags: "A", window: 65535},
		{at: ms(1250), fromCli: true, seq: 1600, ack: 5001, flags: "A", window: 65535, payload: data[:1]}, // keep-alive
		{at: ms(1300), fromCli: true, seq: 1601, ack: 5001, flags: "RA", window: 0},                       // reset
	}
	path := writeCapture(t, cli, srv, segs)
	flows, _ := feedFile(t, path).Flows()
	if len(flows) != 1 {
		t.Fatalf("%d flows, want 1", len(flows))
	}
	f := flows[0]
	want := tsharkCounts(t, path, analysisFilters)
	if got := ourCounts(f); !maps.EqualFunc(got, want, maps.Equal) {
		t.Errorf("counts per side\n got %v\nwant %v (tshark)", got, want)
	}
	if f.Client != cli || !f.ClientKnown || f.IRTT != ms(20) || !f.Reset {
		t.Errorf("client %v (from SYN %v), irtt %v, reset %v", f.Client, f.ClientKnown, f.IRTT, f.Reset)
	}
}

// TestTableEvictsAtItsBound: past MaxFlows the least recently seen flow
// goes, counted.
func TestTableEvictsAtItsBound(t *testing.T) {
	tb := New(Options{MaxFlows: 2})
	srv := netip.MustParseAddrPort("10.0.0.2:5060")
	at := time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC)
	for i := range 3 {
		cli := netip.MustParseAddrPort("10.0.0.1:" + strconv.Itoa(40000+i))
		tb.Segment(segmentOf(cli, srv, at.Add(time.Duration(i)*time.Second)))
	}
	flows, st := tb.Flows()
	if st.Evicted != 1 || st.Flows != 2 || st.Created != 3 || flows[0].ID != 2 || flows[1].ID != 3 {
		t.Errorf("stats %+v, flows %d and %d: want flow 1 evicted", st, flows[0].ID, flows[1].ID)
	}
}

// TestConfiguredSIPSPort: a SIPS port from the configuration is read as
// TLS, and 5061 is not once the list leaves it out.
func TestConfiguredSIPSPort(t *testing.T) {
	tb := New(Options{SIPSPorts: []uint16{5081}})
	at := time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC)
	for _, port := range []uint16{5081, 5061} {
		cli, srv := netip.MustParseAddrPort("10.0.0.1:40000"), netip.AddrPortFrom(netip.MustParseAddr("10.0.0.2"), port)
		tb.Segment(segmentOf(cli, srv, at))
		s := &netdecode.Stream{Src: cli, Dst: srv}
		if n := tb.TLS(s, at, clientHelloSeed); n != len(clientHelloSeed) {
			t.Fatalf("port %d: consumed %d of %d", port, n, len(clientHelloSeed))
		}
	}
	flows, _ := tb.Flows()
	if len(flows) != 1 || flows[0].TLS == nil || flows[0].TLS.SNI != "sip.example.test" {
		t.Fatalf("flows %+v: want the one on 5081, its SNI read", flows)
	}
}
