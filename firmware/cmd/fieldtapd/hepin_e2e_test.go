//go:build linux

package main

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"fieldtap/drivers/pcapfile"
	"fieldtap/drivers/wire"
	"fieldtap/tools/freeport"
	"fieldtap/tools/refdata"
)

// hepBox is a fieldtapd started by the test with MCP over HTTP.
type hepBox struct {
	s      *sdk.ClientSession
	stderr *lockedBuffer
}

// startHEPBox runs fieldtapd on a config body and connects to its MCP.
func startHEPBox(t *testing.T, ctx context.Context, body string) hepBox {
	t.Helper()
	cfg := filepath.Join(t.TempDir(), "fieldtapd.toml")
	if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	_, url, stderr := startHTTP(t, "--config", cfg)
	s, err := newClient().Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr.String())
	}
	t.Cleanup(func() { s.Close() })
	return hepBox{s: s, stderr: stderr}
}

// answer is a tool's envelope, its data and items left as JSON values.
type answer struct {
	OK    bool             `json:"ok"`
	Data  map[string]any   `json:"data"`
	Items []map[string]any `json:"items"`
}

// hepListen is a loopback address free now for a hep port's UDP and TCP:
// the port binds both, and a port free for UDP alone may be a TCP
// connection's local port (seen: the box failed to bind it six times).
func hepListen(t *testing.T) string {
	t.Helper()
	return freeport.Addr(t, "udp+tcp")
}

// hepWait polls until ok holds, failing with what the box logged.
func hepWait(t *testing.T, b hepBox, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(giveUp); !ok(); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("never %s:\n%s", what, b.stderr)
		}
	}
}

// TestHEPBoxToBox: one fieldtapd replays RTP-Protocol.pcap (one call,
// nine SIP messages, two RTCP reports: PROVENANCE.md) and exports it by
// HEP; another listens on a hep port. The second box's dialog, its
// messages and the RTCP reports the endpoints sent are the first's. The
// exporter sends SIP and RTCP only, so the test also sends the capture's
// RTP by HEP (type 4, as heplify does): the reports are read against
// their streams, and the streams too must be the first box's.
func TestHEPBoxToBox(t *testing.T) {
	pcap := refdata.File(t, "sip", "RTP-Protocol.pcap")
	ctx, cancel := context.WithTimeout(context.Background(), 3*giveUp)
	defer cancel()
	a, b, listen := hepPair(t, ctx, pcap)
	callID := sameDialog(t, ctx, a, b, 9)

	rtp := sendRTPByHEP(t, pcap, listen)
	var sa, sb answer
	callTool(t, ctx, a.s, "rtp_stats", map[string]any{"call_id": callID}, &sa)
	hepWait(t, b, "measured the streams sent by HEP", func() bool {
		callTool(t, ctx, b.s, "rtp_streams", map[string]any{"call_id": callID}, &sb)
		var n float64
		for _, s := range sb.Items {
			n += s["packets"].(float64)
		}
		return int(n) == rtp
	})
	callTool(t, ctx, b.s, "rtp_stats", map[string]any{"call_id": callID}, &sb)
	reports := sa.Data["endpoint_reported"].([]any)
	if len(reports) != 2 || !reflect.DeepEqual(sa.Data["endpoint_reported"], sb.Data["endpoint_reported"]) {
		t.Errorf("RTCP reports differ (want the capture's 2):\nexporting box %v\nhep port box  %v", sa.Data["endpoint_reported"], sb.Data["endpoint_reported"])
	}
	if !reflect.DeepEqual(sa.Data["streams"], sb.Data["streams"]) {
		t.Errorf("streams differ:\nexporting box %v\nhep port box  %v", sa.Data["streams"], sb.Data["streams"])
	}
	st := byName(captureStatus(t, ctx, b.s))["hep0"]
	for cause, n := range st.Drops {
		if n != 0 {
			t.Errorf("hep port dropped %d for %s (all %v)", n, cause, st.Drops)
		}
	}
	t.Logf("hep port: %d frames (9 SIP, 2 RTCP, %d RTP), dialog %s", st.Frames, rtp, callID)

	// What the port refuses is lost by cause, in capture_status and in
	// the coverage of an answer that reads the port.
	c, err := net.Dial("udp", listen)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	other, err := wire.AppendHEP(nil, &wire.HEPPacket{Src: netip.MustParseAddrPort("192.0.2.1:5060"), Dst: netip.MustParseAddrPort("192.0.2.2:5060"),
		Proto: wire.HEPProtoUDP, Time: time.Now(), Type: wire.HEPTypeSIP, CaptureID: 7, Payload: []byte("OPTIONS sip:x SIP/2.0\r\n\r\n")})
	if err != nil {
		t.Fatal(err)
	}
	c.Write([]byte("HEP2\x00\x06"))
	c.Write(other) // no key, and another capture id: refused for the key
	other, err = wire.AppendHEP(nil, &wire.HEPPacket{Src: netip.MustParseAddrPort("192.0.2.1:5060"), Dst: netip.MustParseAddrPort("192.0.2.2:5060"),
		Proto: wire.HEPProtoUDP, Time: time.Now(), Type: wire.HEPTypeSIP, CaptureID: 7, AuthKey: "s3cret", Payload: []byte("OPTIONS sip:x SIP/2.0\r\n\r\n")})
	if err != nil {
		t.Fatal(err)
	}
	c.Write(other)
	hepWait(t, b, "counted the refused packets", func() bool {
		st = byName(captureStatus(t, ctx, b.s))["hep0"]
		return st.Drops["hep_bad_magic"] == 1 && st.Drops["hep_auth_refused"] == 1 && st.Drops["hep_capture_id_refused"] == 1
	})
	var cov struct {
		Coverage struct {
			Complete bool `json:"complete"`
			Ports    []struct {
				Port string            `json:"port"`
				Lost map[string]uint64 `json:"lost"`
			} `json:"ports"`
		} `json:"coverage"`
	}
	callTool(t, ctx, b.s, "list_dialogs", map[string]any{}, &cov)
	if p := cov.Coverage.Ports; cov.Coverage.Complete || len(p) != 1 || p[0].Lost["hep_bad_magic"] != 1 || p[0].Lost["hep_auth_refused"] != 1 ||
		p[0].Lost["hep_capture_id_refused"] != 1 {
		t.Errorf("coverage after three refused packets: %+v", cov.Coverage)
	}
}

// hepPair starts a box with a hep port (its auth_key and capture id the
// exporter's) and then a box that replays pcap and exports it by HEP to
// that port; it returns the exporting box, the hep port's box and the
// port's address.
func hepPair(t *testing.T, ctx context.Context, pcap string) (a, b hepBox, listen string) {
	t.Helper()
	listen = hepListen(t)
	b = startHEPBox(t, ctx, fmt.Sprintf("board = \"none\"\n[[port]]\nname = \"hep0\"\ndriver = \"hep\"\nlisten = %q\nauth_key = \"s3cret\"\ncapture_ids = [2001]\n", listen))
	hepWait(t, b, "opened the hep port", func() bool {
		p := byName(captureStatus(t, ctx, b.s))["hep0"]
		return p.State == "capturing" || p.State == "silent"
	})
	a = startHEPBox(t, ctx, fmt.Sprintf("board = \"none\"\nsources = [%q]\n[hep]\nenabled = true\ncollector = %q\ncapture_id = 2001\npassword = \"s3cret\"\nrtcp = true\n", pcap, listen))
	return a, b, listen
}

// sameDialog waits for the capture's one call, ended, in the exporting
// box and with its messages in the hep port's box, and checks that
// list_dialogs and get_dialog answer the same on both. It returns the
// Call-ID.
func sameDialog(t *testing.T, ctx context.Context, a, b hepBox, messages int) string {
	t.Helper()
	var da, db answer
	hepWait(t, a, "listed the capture's ended call", func() bool {
		callTool(t, ctx, a.s, "list_dialogs", map[string]any{}, &da)
		return len(da.Items) == 1 && da.Items[0]["state"] == "ended"
	})
	hepWait(t, b, fmt.Sprintf("listed the exported call with its %d messages", messages), func() bool {
		callTool(t, ctx, b.s, "list_dialogs", map[string]any{}, &db)
		return len(db.Items) == 1 && db.Items[0]["messages"] == float64(messages)
	})
	if !reflect.DeepEqual(da.Items, db.Items) {
		t.Errorf("dialogs differ:\nexporting box %v\nhep port box  %v", da.Items, db.Items)
	}
	callID := da.Items[0]["call_id"].(string)
	var ma, mb answer
	callTool(t, ctx, a.s, "get_dialog", map[string]any{"call_id": callID}, &ma)
	callTool(t, ctx, b.s, "get_dialog", map[string]any{"call_id": callID}, &mb)
	if !reflect.DeepEqual(ma.Data, mb.Data) {
		t.Errorf("get_dialog differs:\nexporting box %v\nhep port box  %v", ma.Data, mb.Data)
	}
	return callID
}

// TestHEPBoxToBoxTCP: SIP over TCP (SIP-Call-Flow-Over-TCP.pcap, seven
// messages on one connection: PROVENANCE.md) goes by HEP as TCP; the hep
// port numbers the stream's bytes so the second box's reassembly frames
// the same seven messages, and both boxes answer the same.
func TestHEPBoxToBoxTCP(t *testing.T) {
	pcap := refdata.File(t, "sip", "SIP-Call-Flow-Over-TCP.pcap")
	ctx, cancel := context.WithTimeout(context.Background(), 3*giveUp)
	defer cancel()
	a, b, _ := hepPair(t, ctx, pcap)
	sameDialog(t, ctx, a, b, 7)
}

// sendRTPByHEP sends the capture's RTP packets (not its RTCP) to a hep
// port as type 4 with the exporting box's capture id and key, and returns how many.
func sendRTPByHEP(t *testing.T, pcap, listen string) int {
	t.Helper()
	c, err := net.Dial("udp", listen)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	n := 0
	refdata.EachRecord(t, pcap, func(r pcapfile.Record) {
		pkt := gopacket.NewPacket(r.Data, layers.LinkType(r.Link), gopacket.NoCopy)
		ip, _ := pkt.Layer(layers.LayerTypeIPv4).(*layers.IPv4)
		udp, _ := pkt.Layer(layers.LayerTypeUDP).(*layers.UDP)
		if ip == nil || udp == nil || udp.SrcPort == 5060 || udp.DstPort == 5060 || len(udp.Payload) < 12 ||
			udp.Payload[0]>>6 != 2 || (udp.Payload[1] >= 200 && udp.Payload[1] <= 207) {
			return
		}
		src, _ := netip.AddrFromSlice(ip.SrcIP)
		dst, _ := netip.AddrFromSlice(ip.DstIP)
		b, err := wire.AppendHEP(nil, &wire.HEPPacket{Src: netip.AddrPortFrom(src, uint16(udp.SrcPort)), Dst: netip.AddrPortFrom(dst, uint16(udp.DstPort)),
			Proto: wire.HEPProtoUDP, Time: r.Time, Type: wire.HEPTypeRTP, CaptureID: 2001, AuthKey: "s3cret", Payload: udp.Payload})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Write(b); err != nil {
			t.Fatal(err)
		}
		n++
		// A pause every few packets keeps loopback's socket buffer from
		// overflowing: a lost datagram would be the test's, not the box's.
		if n%64 == 0 {
			time.Sleep(5 * time.Millisecond)
		}
	})
	return n
}
