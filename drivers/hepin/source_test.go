package hepin

import (
	"context"
	"encoding/json"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"fieldtap/drivers/capture"
	"fieldtap/drivers/capture/capturetest"
	"fieldtap/drivers/wire"
	"fieldtap/tools/freeport"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 250000000, time.UTC)

func encode(t *testing.T, p wire.HEPPacket) []byte {
	t.Helper()
	if p.Time.IsZero() {
		p.Time = t0
	}
	b, err := wire.AppendHEP(nil, &p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// dial connects once the port has bound both listeners (Run binds
// them on its goroutine and then says it is open).
func dial(t *testing.T, src *Source, network, addr string) net.Conn {
	t.Helper()
	for i := 0; src.Stats().OpenSince.IsZero(); i++ {
		if i == 1000 {
			t.Fatalf("%s never opened", addr)
		}
		time.Sleep(10 * time.Millisecond)
	}
	c, err := net.Dial(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestSourceTakesAndRefuses sends what an agent sends, and what a wrong
// one does, over UDP and TCP: the frames are the agent's packets with
// its addresses and times, and every refusal is counted by cause.
func TestSourceTakesAndRefuses(t *testing.T) {
	addr := freeport.Addr(t, "udp+tcp")
	src, err := New(Options{Name: "hep0", Listen: addr, AuthKey: "k", CaptureIDs: []uint32{7}})
	if err != nil {
		t.Fatal(err)
	}
	var counters capture.Counters
	h := capture.NewHandoff(64, &counters)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = src.Run(ctx, h); h.Close() })
	frames := capturetest.Frames(h)
	defer func() { cancel(); wg.Wait() }()

	a, b := netip.MustParseAddrPort("192.0.2.1:5060"), netip.MustParseAddrPort("198.51.100.2:5060")
	sipMsg := []byte("OPTIONS sip:b@198.51.100.2 SIP/2.0\r\nCall-ID: x\r\nContent-Length: 0\r\n\r\n")
	good := wire.HEPPacket{Src: a, Dst: b, Proto: wire.HEPProtoUDP, Type: wire.HEPTypeSIP, CaptureID: 7, AuthKey: "k", Payload: sipMsg}
	wrongKey, noKey, otherID, mos, sctp := good, good, good, good, good
	wrongKey.AuthKey, noKey.AuthKey, otherID.CaptureID, mos.Type, sctp.Proto = "x", "", 8, 0x22, 132
	rr, _ := json.Marshal(map[string]any{"ssrc": 1, "type": 201, "report_count": 1,
		"report_blocks": []map[string]any{{"source_ssrc": 2, "fraction_lost": 3, "packets_lost": 4, "highest_seq_no": 5, "ia_jitter": 6, "lsr": 7, "dlsr": 8}}})
	rtcp := good
	rtcp.Type, rtcp.Src, rtcp.Dst, rtcp.Payload = wire.HEPTypeRTCP, netip.MustParseAddrPort("[2001:db8::1]:6001"), netip.MustParseAddrPort("[2001:db8::2]:7001"), rr

	u := dial(t, src, "udp", addr)
	defer u.Close()
	for _, p := range [][]byte{encode(t, wrongKey), encode(t, noKey), encode(t, otherID), encode(t, mos), encode(t, sctp),
		[]byte("HEP2\x00\x06"), []byte("HEP"), encode(t, good), encode(t, rtcp)} {
		if _, err := u.Write(p); err != nil {
			t.Fatal(err)
		}
	}
	f := <-frames
	pkt := gopacket.NewPacket(f.Data, layers.LayerTypeIPv4, gopacket.Default)
	ip, _ := pkt.Layer(layers.LayerTypeIPv4).(*layers.IPv4)
	udp, _ := pkt.Layer(layers.LayerTypeUDP).(*layers.UDP)
	if f.Link != wire.LinkRaw || !f.Time.Equal(t0) || ip == nil || udp == nil || ip.SrcIP.String() != "192.0.2.1" ||
		ip.DstIP.String() != "198.51.100.2" || udp.SrcPort != 5060 || string(udp.Payload) != string(sipMsg) {
		t.Fatalf("SIP frame %v at %v: %v", f.Link, f.Time, pkt)
	}
	if err := pkt.ErrorLayer(); err != nil {
		t.Fatalf("frame does not decode: %v", err)
	}
	f = <-frames
	pkt = gopacket.NewPacket(f.Data, layers.LayerTypeIPv6, gopacket.Default)
	if udp, _ := pkt.Layer(layers.LayerTypeUDP).(*layers.UDP); udp == nil || udp.DstPort != 7001 {
		t.Fatalf("RTCP frame: %v", pkt)
	}
	if want := []byte{0x81, rtcpRR, 0, 7}; string(f.Data[48:52]) != string(want) || len(f.Data) != 48+32 {
		t.Fatalf("RTCP header % x, want % x", f.Data[48:52], want)
	}

	// TCP: two messages in one write, split by their length fields; the
	// second's sequence number follows the first's bytes.
	c := dial(t, src, "tcp", addr)
	defer c.Close()
	tcp := good
	tcp.Proto = wire.HEPProtoTCP
	if _, err := c.Write(append(encode(t, tcp), encode(t, tcp)...)); err != nil {
		t.Fatal(err)
	}
	var seqs []uint32
	for range 2 {
		f := <-frames
		pkt := gopacket.NewPacket(f.Data, layers.LayerTypeIPv4, gopacket.Default)
		seg, _ := pkt.Layer(layers.LayerTypeTCP).(*layers.TCP)
		if seg == nil || string(seg.Payload) != string(sipMsg) || seg.DstPort != 5060 {
			t.Fatalf("TCP frame: %v", pkt)
		}
		seqs = append(seqs, seg.Seq)
	}
	if seqs[1]-seqs[0] != uint32(len(sipMsg)) {
		t.Errorf("sequence numbers %v, want %d apart", seqs, len(sipMsg))
	}
	// A stream that is not HEP ends its connection and is counted; the
	// connection's end is the read that says so.
	c2 := dial(t, src, "tcp", addr)
	c2.Write([]byte("GET / HTTP/1.1\r\n\r\n"))
	c2.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := c2.Read(make([]byte, 1)); err == nil {
		t.Fatal("a connection that sent HTTP stayed open")
	}
	c2.Close()

	st := src.Stats()
	want := map[string]uint64{DropAuthRefused: 2, DropCaptureIDRefused: 1, DropUnsupportedType: 1, DropUnsupportedProto: 1,
		wire.HEPBadMagic: 2, wire.HEPShort: 1}
	for k, v := range want {
		if st.Drops[k] != v {
			t.Errorf("drops[%s] = %d, want %d (all %v)", k, st.Drops[k], v, st.Drops)
		}
	}
	if st.OpenSince.IsZero() {
		t.Error("an open port says it is not open")
	}
}

func TestOptions(t *testing.T) {
	for _, o := range []Options{{Listen: "nohost"}, {MaxFrame: 100}, {MaxConnections: MaxMaxConnections + 1}} {
		if _, err := New(o); err == nil {
			t.Errorf("options %+v taken", o)
		}
	}
	s, err := New(Options{Name: "hep0"})
	if err != nil || s.Origin() != "hep:"+DefaultListen {
		t.Fatalf("defaults: %v, %v", s, err)
	}
}

// FuzzRTCPFromJSON reads what an agent wrote as HOMER's RTCP JSON: a
// packet it builds is an RTCP packet whose length field covers it.
func FuzzRTCPFromJSON(f *testing.F) {
	f.Add([]byte(`{"sender_information":{"ntp_timestamp_sec":1,"ntp_timestamp_usec":2,"rtp_timestamp":3,"packets":4,"octets":5},"ssrc":6,"type":200,"report_count":0,"report_blocks":[]}`))
	f.Add([]byte(`{"ssrc":1,"type":201,"report_count":1,"report_blocks":[{"source_ssrc":2,"fraction_lost":3,"packets_lost":-1,"highest_seq_no":5,"ia_jitter":6,"lsr":7,"dlsr":8}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		out, err := rtcpFromJSON(b)
		if err != nil {
			return
		}
		if !isRawRTCP(out) || 4*(int(out[2])<<8|int(out[3])+1) != len(out) {
			t.Fatalf("built % x", out)
		}
	})
}

// An address another socket holds fails the attempt with an error naming
// it, for the supervisor to retry; it is not taken for a clean end.
func TestSourceListenFails(t *testing.T) {
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	src, err := New(Options{Name: "hep0", Listen: held.Addr().String()})
	if err != nil {
		t.Fatal(err)
	}
	var counters capture.Counters
	err = src.Run(context.Background(), capture.NewHandoff(4, &counters))
	if err == nil || !strings.Contains(err.Error(), "listen") {
		t.Fatalf("Run on a held address: %v", err)
	}
}
