package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"testing"
	"time"
)

// hepDecoded is a packet read back by decode, an independent reading of
// the chunk layout that checks every length.
type hepDecoded struct {
	family, proto, typ uint8
	src, dst           netip.AddrPort
	sec, usec, capID   uint32
	auth, node, corr   string
	payload            []byte
}

func hepDecode(b []byte) (hepDecoded, error) {
	var d hepDecoded
	if len(b) < HEPHeaderLen || string(b[:4]) != hepMagic {
		return d, errors.New("no HEP3 header")
	}
	if int(binary.BigEndian.Uint16(b[4:])) != len(b) {
		return d, fmt.Errorf("length field %d, packet %d", binary.BigEndian.Uint16(b[4:]), len(b))
	}
	var sip, dip netip.Addr
	var sport, dport uint16
	for off := HEPHeaderLen; off < len(b); {
		if off+hepChunkHdrLen > len(b) {
			return d, fmt.Errorf("chunk header cut at %d", off)
		}
		vendor, typ, n := binary.BigEndian.Uint16(b[off:]), binary.BigEndian.Uint16(b[off+2:]), int(binary.BigEndian.Uint16(b[off+4:]))
		if vendor != 0 || n < hepChunkHdrLen || off+n > len(b) {
			return d, fmt.Errorf("chunk %#x at %d: vendor %d length %d", typ, off, vendor, n)
		}
		v := b[off+hepChunkHdrLen : off+n]
		switch typ {
		case hepChunkFamily:
			d.family = v[0]
		case hepChunkProto:
			d.proto = v[0]
		case hepChunkSrcIP4, hepChunkSrcIP6:
			sip, _ = netip.AddrFromSlice(v)
		case hepChunkDstIP4, hepChunkDstIP6:
			dip, _ = netip.AddrFromSlice(v)
		case hepChunkSrcPort:
			sport = binary.BigEndian.Uint16(v)
		case hepChunkDstPort:
			dport = binary.BigEndian.Uint16(v)
		case hepChunkTimeSec:
			d.sec = binary.BigEndian.Uint32(v)
		case hepChunkTimeUsec:
			d.usec = binary.BigEndian.Uint32(v)
		case hepChunkPayloadType:
			d.typ = v[0]
		case hepChunkCaptureID:
			d.capID = binary.BigEndian.Uint32(v)
		case hepChunkAuthKey:
			d.auth = string(v)
		case hepChunkNodeName:
			d.node = string(v)
		case hepChunkCorrelation:
			d.corr = string(v)
			if off+n == len(b) {
				return d, errors.New("correlation id is the last chunk: Kamailio would read past it")
			}
		case hepChunkPayload:
			d.payload = bytes.Clone(v)
		default:
			return d, fmt.Errorf("unexpected chunk %#x", typ)
		}
		off += n
	}
	d.src, d.dst = netip.AddrPortFrom(sip, sport), netip.AddrPortFrom(dip, dport)
	return d, nil
}

var hepT0 = time.Date(2026, 3, 1, 12, 0, 0, 123456000, time.UTC)

func TestAppendHEP(t *testing.T) {
	tests := []struct {
		name    string
		p       HEPPacket
		family  uint8
		wantErr error
	}{
		{name: "SIP over IPv4", family: hepFamilyIPv4, p: HEPPacket{Src: netip.MustParseAddrPort("192.0.2.1:5060"), Dst: netip.MustParseAddrPort("198.51.100.2:5060"),
			Proto: HEPProtoUDP, Time: hepT0, Type: HEPTypeSIP, CaptureID: 2001, Payload: []byte("INVITE sip:a@b SIP/2.0\r\n\r\n")}},
		{name: "RTCP over IPv6 with correlation, key and node", family: hepFamilyIPv6, p: HEPPacket{Src: netip.MustParseAddrPort("[2001:db8::1]:6001"), Dst: netip.MustParseAddrPort("[2001:db8::2]:7001"),
			Proto: HEPProtoUDP, Time: hepT0, Type: HEPTypeRTCP, CaptureID: 7, AuthKey: "k", Node: "box-1", Correlation: "abc@host", Payload: []byte(`{"ssrc":1}`)}},
		{name: "mapped IPv4 is IPv4", family: hepFamilyIPv4, p: HEPPacket{Src: netip.MustParseAddrPort("[::ffff:192.0.2.1]:5060"), Dst: netip.MustParseAddrPort("[::ffff:192.0.2.2]:5060"),
			Proto: HEPProtoTCP, Time: hepT0, Type: HEPTypeSIP, Payload: []byte("x")}},
		{name: "mixed families refused", p: HEPPacket{Src: netip.MustParseAddrPort("192.0.2.1:1"), Dst: netip.MustParseAddrPort("[2001:db8::2]:2"), Payload: []byte("x")}, wantErr: errors.New("family")},
		{name: "too large refused", p: HEPPacket{Src: netip.MustParseAddrPort("192.0.2.1:1"), Dst: netip.MustParseAddrPort("192.0.2.2:2"), Payload: make([]byte, HEPMaxPacket)}, wantErr: ErrHEPTooLarge},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := AppendHEP([]byte("keep"), &tc.p)
			if tc.wantErr != nil {
				if err == nil {
					t.Fatalf("Append = nil error, want %v", tc.wantErr)
				}
				if errors.Is(tc.wantErr, ErrHEPTooLarge) && !errors.Is(err, ErrHEPTooLarge) {
					t.Errorf("err %v, want ErrHEPTooLarge", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(b[:4]) != "keep" || len(b)-4 != tc.p.Size() {
				t.Fatalf("appended %d bytes, Size says %d", len(b)-4, tc.p.Size())
			}
			d, err := hepDecode(b[4:])
			if err != nil {
				t.Fatal(err)
			}
			src, dst := netip.AddrPortFrom(tc.p.Src.Addr().Unmap(), tc.p.Src.Port()), netip.AddrPortFrom(tc.p.Dst.Addr().Unmap(), tc.p.Dst.Port())
			if d.family != tc.family || d.proto != tc.p.Proto || d.src != src || d.dst != dst || d.typ != tc.p.Type || d.capID != tc.p.CaptureID ||
				d.sec != uint32(hepT0.Unix()) || d.usec != 123456 || d.auth != tc.p.AuthKey || d.node != tc.p.Node || d.corr != tc.p.Correlation ||
				!bytes.Equal(d.payload, tc.p.Payload) {
				t.Errorf("hepDecoded %+v from %+v", d, tc.p)
			}
		})
	}
}

// FuzzAppend encodes captured bytes and sender-chosen Call-IDs: the
// packet must always decode back to what went in, or be refused.
func FuzzAppendHEP(f *testing.F) {
	f.Add([]byte("INVITE sip:a@b SIP/2.0\r\n\r\n"), "abc@host", true)
	f.Add([]byte{}, "", false)
	f.Fuzz(func(t *testing.T, payload []byte, corr string, v4 bool) {
		p := HEPPacket{Src: netip.MustParseAddrPort("[2001:db8::1]:1"), Dst: netip.MustParseAddrPort("[2001:db8::2]:2"), Time: hepT0, Type: HEPTypeRTCP, Correlation: corr, Payload: payload}
		if v4 {
			p.Src, p.Dst = netip.MustParseAddrPort("192.0.2.1:1"), netip.MustParseAddrPort("192.0.2.2:2")
		}
		b, err := AppendHEP(nil, &p)
		if err != nil {
			if !errors.Is(err, ErrHEPTooLarge) {
				t.Fatal(err)
			}
			return
		}
		d, err := hepDecode(b)
		if err != nil {
			t.Fatal(err)
		}
		if d.corr != corr || !bytes.Equal(d.payload, payload) {
			t.Fatalf("round trip changed the packet")
		}
	})
}
