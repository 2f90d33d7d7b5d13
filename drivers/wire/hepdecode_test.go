package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"net/netip"
	"testing"
)

// hepSeed is what the encoder writes for one SIP message over IPv4 with
// every optional chunk: the decoder's first reference.
func hepSeed(t testing.TB, v6 bool) []byte {
	t.Helper()
	p := HEPPacket{Src: netip.MustParseAddrPort("192.0.2.1:5060"), Dst: netip.MustParseAddrPort("198.51.100.2:5062"),
		Proto: HEPProtoTCP, Time: hepT0, Type: HEPTypeSIP, CaptureID: 2001, AuthKey: "secret", Node: "box-1",
		Correlation: "abc@host", Payload: []byte("OPTIONS sip:a@b SIP/2.0\r\n\r\n")}
	if v6 {
		p.Src, p.Dst = netip.MustParseAddrPort("[2001:db8::1]:6001"), netip.MustParseAddrPort("[2001:db8::2]:7001")
		p.Proto, p.Type, p.AuthKey, p.Node = HEPProtoUDP, HEPTypeRTCP, "", ""
	}
	b, err := AppendHEP(nil, &p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// hepChunkBytes is one generic chunk.
func hepChunkBytes(typ uint16, v []byte) []byte {
	b := binary.BigEndian.AppendUint16(nil, 0)
	b = binary.BigEndian.AppendUint16(b, typ)
	b = binary.BigEndian.AppendUint16(b, uint16(hepChunkHdrLen+len(v)))
	return append(b, v...)
}

// withChunk appends a chunk to an encoded packet and fixes its length.
func withChunk(b []byte, c []byte) []byte {
	out := append(bytes.Clone(b), c...)
	binary.BigEndian.PutUint16(out[4:], uint16(len(out)))
	return out
}

func TestDecodeHEPReadsTheEncoder(t *testing.T) {
	var m HEPMessage
	if err := DecodeHEP(hepSeed(t, false), &m); err != nil {
		t.Fatal(err)
	}
	if m.Src != netip.MustParseAddrPort("192.0.2.1:5060") || m.Dst != netip.MustParseAddrPort("198.51.100.2:5062") ||
		m.Proto != HEPProtoTCP || m.Type != HEPTypeSIP || !m.Time.Equal(hepT0) || !m.HasCaptureID || m.CaptureID != 2001 ||
		string(m.AuthKey) != "secret" || string(m.Correlation) != "abc@host" || string(m.Payload) != "OPTIONS sip:a@b SIP/2.0\r\n\r\n" ||
		m.Unknown != 1 || m.KeepAlive {
		t.Errorf("decoded %+v", m)
	}
	if err := DecodeHEP(hepSeed(t, true), &m); err != nil {
		t.Fatal(err)
	}
	if m.Src != netip.MustParseAddrPort("[2001:db8::1]:6001") || m.Type != HEPTypeRTCP || m.AuthKey != nil || m.Unknown != 0 {
		t.Errorf("decoded %+v", m)
	}
}

func TestDecodeHEPRefuses(t *testing.T) {
	good := hepSeed(t, false)
	trunc := bytes.Clone(good[:len(good)-3])
	badLen := bytes.Clone(good)
	binary.BigEndian.PutUint16(badLen[4:], 3)
	chunkOver := bytes.Clone(good)
	binary.BigEndian.PutUint16(chunkOver[HEPHeaderLen+4:], 0xffff)
	// A packet without a payload: the header and the first chunk only.
	noPayload := withChunk([]byte("HEP3\x00\x00"), hepChunkBytes(hepChunkFamily, []byte{hepFamilyIPv4}))
	for _, tc := range []struct {
		name, cause string
		b           []byte
	}{
		{name: "empty", cause: HEPShort, b: nil},
		{name: "HEP2", cause: HEPBadMagic, b: append([]byte("HEP2"), good[4:]...)},
		{name: "truncated", cause: HEPShort, b: trunc},
		{name: "trailing bytes", cause: HEPBadLength, b: append(bytes.Clone(good), 0)},
		{name: "length below header", cause: HEPBadLength, b: badLen},
		{name: "chunk past the packet", cause: HEPBadLength, b: chunkOver},
		{name: "chunk header cut", cause: HEPShort, b: withChunk(good, []byte{0, 0, 0})},
		{name: "port of 3 bytes", cause: HEPBadChunk, b: withChunk(good, hepChunkBytes(hepChunkSrcPort, []byte{1, 2, 3}))},
		{name: "microseconds past a second", cause: HEPBadChunk, b: withChunk(good, hepChunkBytes(hepChunkTimeUsec, []byte{0, 0x0f, 0x42, 0x40}))},
		{name: "no payload", cause: HEPIncomplete, b: noPayload},
		{name: "family 7", cause: HEPIncomplete, b: withChunk(good, hepChunkBytes(hepChunkFamily, []byte{7}))},
		{name: "IPv6 family, IPv4 addresses", cause: HEPIncomplete, b: withChunk(good, hepChunkBytes(hepChunkFamily, []byte{hepFamilyIPv6}))},
		{name: "compressed only", cause: HEPCompressed, b: withChunk(noPayload, hepChunkBytes(hepChunkCompressed, []byte{0x78, 0x9c}))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var m HEPMessage
			err := DecodeHEP(tc.b, &m)
			var he *HEPError
			if !errors.As(err, &he) || he.Cause != tc.cause {
				t.Fatalf("err %v, want cause %s", err, tc.cause)
			}
		})
	}
}

func TestDecodeHEPKeepAlive(t *testing.T) {
	b := withChunk([]byte("HEP3\x00\x00"), hepChunkBytes(hepChunkKeepAlive, []byte{0, 30}))
	var m HEPMessage
	if err := DecodeHEP(b, &m); err != nil || !m.KeepAlive || m.Payload != nil {
		t.Fatalf("err %v, message %+v", err, m)
	}
}

func TestHEPLength(t *testing.T) {
	good := hepSeed(t, false)
	if n, err := HEPLength(good[:HEPHeaderLen]); err != nil || n != len(good) {
		t.Fatalf("HEPLength %d, %v; want %d", n, err, len(good))
	}
	if _, err := HEPLength([]byte("GET / HTTP/1.1")); err == nil {
		t.Fatal("an HTTP request was taken for HEP")
	}
}

// FuzzDecodeHEP reads sender-written packets, seeded with the encoder's
// output: a packet is refused with a cause, or it encodes back to bytes
// that decode to the same message.
func FuzzDecodeHEP(f *testing.F) {
	f.Add(hepSeed(f, false))
	f.Add(hepSeed(f, true))
	f.Add([]byte("HEP3\x00\x06"))
	f.Fuzz(func(t *testing.T, b []byte) {
		var m HEPMessage
		if err := DecodeHEP(b, &m); err != nil {
			var he *HEPError
			if !errors.As(err, &he) || he.Cause == "" {
				t.Fatalf("error without a cause: %v", err)
			}
			return
		}
		if m.KeepAlive && m.Payload == nil {
			return
		}
		p := HEPPacket{Src: m.Src, Dst: m.Dst, Proto: m.Proto, Time: m.Time, Type: m.Type, CaptureID: m.CaptureID,
			AuthKey: string(m.AuthKey), Correlation: string(m.Correlation), Payload: m.Payload}
		again, err := AppendHEP(nil, &p)
		if err != nil {
			return // a key or correlation id too long to fit with the rest
		}
		var m2 HEPMessage
		if err := DecodeHEP(again, &m2); err != nil {
			t.Fatalf("re-encoded packet refused: %v", err)
		}
		if m2.Src != m.Src || m2.Dst != m.Dst || m2.Proto != m.Proto || !m2.Time.Equal(m.Time) || m2.Type != m.Type ||
			m2.CaptureID != m.CaptureID || !bytes.Equal(m2.Payload, m.Payload) || !bytes.Equal(m2.AuthKey, m.AuthKey) {
			t.Fatalf("round trip changed %+v into %+v", m, m2)
		}
	})
}

// BenchmarkDecodeHEP is a hep port's cost per packet before its frame is
// built: no allocation.
func BenchmarkDecodeHEP(b *testing.B) {
	pkt := hepSeed(b, false)
	var m HEPMessage
	b.ReportAllocs()
	b.SetBytes(int64(len(pkt)))
	for b.Loop() {
		if err := DecodeHEP(pkt, &m); err != nil {
			b.Fatal(err)
		}
	}
}
