package hep

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"regexp"
	"testing"
	"time"

	"fieldtap/drivers/pcapfile"
	"fieldtap/services/netdecode"
	"fieldtap/services/rtp"
	"fieldtap/services/sip"
	"fieldtap/tools/refdata"
)

// decoded is a packet read back by decode, an independent reading of
// the chunk layout that checks every length.
type decoded struct {
	family, proto, typ uint8
	src, dst           netip.AddrPort
	sec, usec, capID   uint32
	auth, node, corr   string
	payload            []byte
}

func decode(b []byte) (decoded, error) {
	var d decoded
	if len(b) < headerLen || string(b[:4]) != magic {
		return d, errors.New("no HEP3 header")
	}
	if int(binary.BigEndian.Uint16(b[4:])) != len(b) {
		return d, fmt.Errorf("length field %d, packet %d", binary.BigEndian.Uint16(b[4:]), len(b))
	}
	var sip, dip netip.Addr
	var sport, dport uint16
	for off := headerLen; off < len(b); {
		if off+chunkHdrLen > len(b) {
			return d, fmt.Errorf("chunk header cut at %d", off)
		}
		vendor, typ, n := binary.BigEndian.Uint16(b[off:]), binary.BigEndian.Uint16(b[off+2:]), int(binary.BigEndian.Uint16(b[off+4:]))
		if vendor != 0 || n < chunkHdrLen || off+n > len(b) {
			return d, fmt.Errorf("chunk %#x at %d: vendor %d length %d", typ, off, vendor, n)
		}
		v := b[off+chunkHdrLen : off+n]
		switch typ {
		case chunkFamily:
			d.family = v[0]
		case chunkProto:
			d.proto = v[0]
		case chunkSrcIP4, chunkSrcIP6:
			sip, _ = netip.AddrFromSlice(v)
		case chunkDstIP4, chunkDstIP6:
			dip, _ = netip.AddrFromSlice(v)
		case chunkSrcPort:
			sport = binary.BigEndian.Uint16(v)
		case chunkDstPort:
			dport = binary.BigEndian.Uint16(v)
		case chunkTimeSec:
			d.sec = binary.BigEndian.Uint32(v)
		case chunkTimeUsec:
			d.usec = binary.BigEndian.Uint32(v)
		case chunkPayloadType:
			d.typ = v[0]
		case chunkCaptureID:
			d.capID = binary.BigEndian.Uint32(v)
		case chunkAuthKey:
			d.auth = string(v)
		case chunkNodeName:
			d.node = string(v)
		case chunkCorrelation:
			d.corr = string(v)
			if off+n == len(b) {
				return d, errors.New("correlation id is the last chunk: Kamailio would read past it")
			}
		case chunkPayload:
			d.payload = bytes.Clone(v)
		default:
			return d, fmt.Errorf("unexpected chunk %#x", typ)
		}
		off += n
	}
	d.src, d.dst = netip.AddrPortFrom(sip, sport), netip.AddrPortFrom(dip, dport)
	return d, nil
}

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 123456000, time.UTC)

func TestAppend(t *testing.T) {
	tests := []struct {
		name    string
		p       Packet
		family  uint8
		wantErr error
	}{
		{name: "SIP over IPv4", family: familyIPv4, p: Packet{Src: netip.MustParseAddrPort("192.0.2.1:5060"), Dst: netip.MustParseAddrPort("198.51.100.2:5060"),
			Proto: ProtoUDP, Time: t0, Type: TypeSIP, CaptureID: 2001, Payload: []byte("INVITE sip:a@b SIP/2.0\r\n\r\n")}},
		{name: "RTCP over IPv6 with correlation, key and node", family: familyIPv6, p: Packet{Src: netip.MustParseAddrPort("[2001:db8::1]:6001"), Dst: netip.MustParseAddrPort("[2001:db8::2]:7001"),
			Proto: ProtoUDP, Time: t0, Type: TypeRTCP, CaptureID: 7, AuthKey: "k", Node: "box-1", Correlation: "abc@host", Payload: []byte(`{"ssrc":1}`)}},
		{name: "mapped IPv4 is IPv4", family: familyIPv4, p: Packet{Src: netip.MustParseAddrPort("[::ffff:192.0.2.1]:5060"), Dst: netip.MustParseAddrPort("[::ffff:192.0.2.2]:5060"),
			Proto: ProtoTCP, Time: t0, Type: TypeSIP, Payload: []byte("x")}},
		{name: "mixed families refused", p: Packet{Src: netip.MustParseAddrPort("192.0.2.1:1"), Dst: netip.MustParseAddrPort("[2001:db8::2]:2"), Payload: []byte("x")}, wantErr: errors.New("family")},
		{name: "too large refused", p: Packet{Src: netip.MustParseAddrPort("192.0.2.1:1"), Dst: netip.MustParseAddrPort("192.0.2.2:2"), Payload: make([]byte, MaxPacket)}, wantErr: ErrTooLarge},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := Append([]byte("keep"), &tc.p)
			if tc.wantErr != nil {
				if err == nil {
					t.Fatalf("Append = nil error, want %v", tc.wantErr)
				}
				if errors.Is(tc.wantErr, ErrTooLarge) && !errors.Is(err, ErrTooLarge) {
					t.Errorf("err %v, want ErrTooLarge", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(b[:4]) != "keep" || len(b)-4 != tc.p.Size() {
				t.Fatalf("appended %d bytes, Size says %d", len(b)-4, tc.p.Size())
			}
			d, err := decode(b[4:])
			if err != nil {
				t.Fatal(err)
			}
			src, dst := netip.AddrPortFrom(tc.p.Src.Addr().Unmap(), tc.p.Src.Port()), netip.AddrPortFrom(tc.p.Dst.Addr().Unmap(), tc.p.Dst.Port())
			if d.family != tc.family || d.proto != tc.p.Proto || d.src != src || d.dst != dst || d.typ != tc.p.Type || d.capID != tc.p.CaptureID ||
				d.sec != uint32(t0.Unix()) || d.usec != 123456 || d.auth != tc.p.AuthKey || d.node != tc.p.Node || d.corr != tc.p.Correlation ||
				!bytes.Equal(d.payload, tc.p.Payload) {
				t.Errorf("decoded %+v from %+v", d, tc.p)
			}
		})
	}
}

// FuzzAppend encodes captured bytes and sender-chosen Call-IDs: the
// packet must always decode back to what went in, or be refused.
func FuzzAppend(f *testing.F) {
	f.Add([]byte("INVITE sip:a@b SIP/2.0\r\n\r\n"), "abc@host", true)
	f.Add([]byte{}, "", false)
	f.Fuzz(func(t *testing.T, payload []byte, corr string, v4 bool) {
		p := Packet{Src: netip.MustParseAddrPort("[2001:db8::1]:1"), Dst: netip.MustParseAddrPort("[2001:db8::2]:2"), Time: t0, Type: TypeRTCP, Correlation: corr, Payload: payload}
		if v4 {
			p.Src, p.Dst = netip.MustParseAddrPort("192.0.2.1:1"), netip.MustParseAddrPort("192.0.2.2:2")
		}
		b, err := Append(nil, &p)
		if err != nil {
			if !errors.Is(err, ErrTooLarge) {
				t.Fatal(err)
			}
			return
		}
		d, err := decode(b)
		if err != nil {
			t.Fatal(err)
		}
		if d.corr != corr || !bytes.Equal(d.payload, payload) {
			t.Fatalf("round trip changed the packet")
		}
	})
}

// TestExporterOnReferenceCapture feeds RTP-Protocol.pcap (one call,
// nine SIP messages, two RTCP packets: PROVENANCE.md) through the real
// SPAN analyser with the exporter tapped in, to a UDP socket on
// loopback, and reads every packet back.
func TestExporterOnReferenceCapture(t *testing.T) {
	path := refdata.File(t, "sip", "RTP-Protocol.pcap")
	ln, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	exp, err := New(Options{Collector: ln.LocalAddr().String(), CaptureID: 2001, RTCP: true})
	if err != nil {
		t.Fatal(err)
	}
	store, _ := sip.New(sip.Limits{})
	an := sip.NewAnalyser(store, netdecode.Options{})
	media := rtp.NewAnalyser(rtp.Options{})
	an.SetMediaHook(&Tee{Next: media, Calls: media, Exp: exp})
	an.SetTap(exp)
	// As the daemon feeds: the whole capture one batch, held. The tee's
	// CallOf for each RTCP packet runs inside the hold (a plain lock
	// there would deadlock this test).
	an.Hold()
	refdata.EachRecord(t, path, func(r pcapfile.Record) { an.Feed(r.Time, r.Link, r.Data) })
	an.Release()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go exp.Run(ctx)
	const wantSIP, wantRTCP = 9, 2
	callIDs := map[string]int{}
	var rtcp []decoded
	buf := make([]byte, MaxPacket)
	callID := regexp.MustCompile(`(?mi)^(?:Call-ID|i)\s*:\s*(\S+)`)
	for len(rtcp)+sum(callIDs) < wantSIP+wantRTCP {
		ln.SetReadDeadline(time.Now().Add(10 * time.Second))
		n, _, err := ln.ReadFrom(buf)
		if err != nil {
			t.Fatalf("after %d SIP and %d RTCP: %v (stats %+v)", sum(callIDs), len(rtcp), err, exp.Stats())
		}
		d, err := decode(buf[:n])
		if err != nil {
			t.Fatal(err)
		}
		switch d.typ {
		case TypeSIP:
			m := callID.FindSubmatch(d.payload)
			if m == nil {
				t.Fatalf("SIP packet without a Call-ID:\n%s", d.payload)
			}
			callIDs[string(m[1])]++
		case TypeRTCP:
			rtcp = append(rtcp, d)
		}
	}
	if len(callIDs) != 1 {
		t.Fatalf("Call-IDs %v, want the capture's one", callIDs)
	}
	for id := range callIDs {
		for _, r := range rtcp {
			var j map[string]any
			if err := json.Unmarshal(r.payload, &j); err != nil {
				t.Fatalf("RTCP payload is not JSON: %s", r.payload)
			}
			if r.corr != id || j["ssrc"] == nil || j["report_blocks"] == nil {
				t.Errorf("RTCP correlation %q payload %s, want %q and HOMER's keys", r.corr, r.payload, id)
			}
		}
	}
	if st := exp.Stats(); st.SIP != wantSIP || st.RTCP != wantRTCP || len(st.Dropped) != 0 {
		t.Errorf("stats %+v", st)
	}
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// TestQueueBound fills the queue with nothing sending: what does not fit
// is counted, and memory stops at the bound.
func TestQueueBound(t *testing.T) {
	exp, err := New(Options{Collector: "127.0.0.1:9", QueuePackets: 4, QueueBytes: MaxPacket})
	if err != nil {
		t.Fatal(err)
	}
	meta := sip.Meta{Time: t0, Src: netip.MustParseAddrPort("192.0.2.1:5060"), Dst: netip.MustParseAddrPort("192.0.2.2:5060"), Transport: sip.TransportUDP}
	for range 10 {
		exp.Message(meta, []byte("OPTIONS sip:a@b SIP/2.0\r\n\r\n"))
	}
	st := exp.Stats()
	if st.Queued != 4 || st.Dropped[DropQueueFull] != 6 || st.SIP != 4 {
		t.Errorf("stats %+v, want 4 queued and 6 dropped queue_full", st)
	}
	big := make([]byte, MaxPacket)
	exp.Message(meta, big)
	if exp.Stats().Dropped[DropTooLarge] != 1 {
		t.Errorf("an oversize message was not counted too_large: %+v", exp.Stats())
	}
}

func TestOptions(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    Options
		ok   bool
	}{
		{name: "defaults", o: Options{Collector: "homer:9060"}, ok: true},
		{name: "no port", o: Options{Collector: "homer"}},
		{name: "queue too small for one packet", o: Options{Collector: "h:1", QueueBytes: 100}},
		{name: "too many packets", o: Options{Collector: "h:1", QueuePackets: MaxQueuePackets + 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.o)
			if (err == nil) != tc.ok {
				t.Errorf("New = %v, want ok %v", err, tc.ok)
			}
		})
	}
}

// FuzzReport feeds sender-written RTCP datagrams to the exporter: every
// packet it queues decodes, carries the correlation id and valid JSON.
func FuzzReport(f *testing.F) {
	// An RR with one report block, as RTP-Protocol.pcap's endpoints send.
	f.Add([]byte{0x81, 0xC9, 0x00, 0x07, 0x06, 0xC1, 0x56, 0xFD, 0x44, 0xC6, 0x1A, 0xFB, 0x00, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00})
	f.Add([]byte{0x80, 0xC8, 0x00, 0x06, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0, 5, 0, 0, 0, 6})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		exp, err := New(Options{Collector: "127.0.0.1:9", RTCP: true, QueuePackets: 64})
		if err != nil {
			t.Fatal(err)
		}
		d := netdecode.Datagram{Time: t0, Src: netip.MustParseAddrPort("192.0.2.1:6001"), Dst: netip.MustParseAddrPort("192.0.2.2:7001"), Payload: b}
		exp.report(d, "call@host")
		for len(exp.q) > 0 {
			p, err := decode(<-exp.q)
			if err != nil {
				t.Fatal(err)
			}
			if p.corr != "call@host" || p.typ != TypeRTCP || !json.Valid(p.payload) {
				t.Fatalf("packet %+v", p)
			}
		}
	})
}
