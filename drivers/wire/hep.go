package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"time"
)

// HEP3 framing (HEP3 rev 12, sipcapture's HEP repository): "HEP3", a 16-bit total length, then
// chunks of vendor id, type id and a length that counts the 6-byte chunk
// header. Vendor 0 is the generic chunk set.
const (
	hepMagic = "HEP3"
	// HEPHeaderLen is the magic and the total length: what a stream
	// reader needs to find where a packet ends (HEPLength).
	HEPHeaderLen   = 6
	hepChunkHdrLen = 6
	// HEPMaxPacket is the largest packet sent: the 16-bit length field
	// allows 65535, a UDP datagram over IPv4 carries at most 65507.
	HEPMaxPacket = 65507
)

// Generic chunk types used here.
const (
	hepChunkFamily      = 0x0001 // uint8: 2 IPv4, 10 IPv6
	hepChunkProto       = 0x0002 // uint8: IANA protocol number
	hepChunkSrcIP4      = 0x0003
	hepChunkDstIP4      = 0x0004
	hepChunkSrcIP6      = 0x0005
	hepChunkDstIP6      = 0x0006
	hepChunkSrcPort     = 0x0007 // uint16
	hepChunkDstPort     = 0x0008
	hepChunkTimeSec     = 0x0009 // uint32 seconds
	hepChunkTimeUsec    = 0x000a // uint32 microseconds of that second
	hepChunkPayloadType = 0x000b // uint8, below
	hepChunkCaptureID   = 0x000c // uint32
	hepChunkKeepAlive   = 0x000d // uint16 seconds: the agent's keep-alive timer
	hepChunkAuthKey     = 0x000e // string
	hepChunkPayload     = 0x000f
	hepChunkCompressed  = 0x0010 // a compressed payload
	hepChunkCorrelation = 0x0011 // string
	hepChunkNodeName    = 0x0013 // string
)

// Payload types (chunk 0x000b) as sipcapture's HEP3 spec numbers them.
const (
	HEPTypeSIP  = 1 // the SIP message as captured
	HEPTypeRTP  = 4 // one RTP packet as captured
	HEPTypeRTCP = 5 // an RTCP report as HOMER's JSON
)

// Address families and protocols as HEP writes them (the Linux values).
const (
	hepFamilyIPv4 = 2
	hepFamilyIPv6 = 10
	HEPProtoUDP   = 17
	HEPProtoTCP   = 6
)

// HEPPacket is one captured message to export.
type HEPPacket struct {
	Src, Dst  netip.AddrPort
	Proto     uint8 // HEPProtoUDP or HEPProtoTCP
	Time      time.Time
	Type      uint8 // HEPTypeSIP or HEPTypeRTCP
	CaptureID uint32
	// AuthKey, when set, is the collector's password (chunk 0x000e).
	AuthKey string
	// Node names the box to collectors that read chunk 0x0013.
	Node string
	// Correlation ties a report to its call: the Call-ID.
	Correlation string
	Payload     []byte
}

// ErrHEPTooLarge is returned for a packet past HEPMaxPacket.
var ErrHEPTooLarge = errors.New("hep: packet too large")

// Size is the encoded length of p.
func (p *HEPPacket) Size() int {
	ipLen := 4
	if p.Src.Addr().Unmap().Is6() {
		ipLen = 16
	}
	n := HEPHeaderLen + 2*(hepChunkHdrLen+1) + 2*(hepChunkHdrLen+ipLen) + 2*(hepChunkHdrLen+2) + 2*(hepChunkHdrLen+4) +
		(hepChunkHdrLen + 1) + (hepChunkHdrLen + 4) + hepChunkHdrLen + len(p.Payload)
	for _, s := range []string{p.AuthKey, p.Node, p.Correlation} {
		if s != "" {
			n += hepChunkHdrLen + len(s)
		}
	}
	return n
}

// Append encodes p after dst. The addresses must be of one family.
//
// The correlation id comes before the payload: Kamailio's sipcapture
// reads it with strlen, and the next chunk's vendor id (0x0000) is what
// ends it; as the last chunk it would run past the packet.
func AppendHEP(dst []byte, p *HEPPacket) ([]byte, error) {
	src, dstIP := p.Src.Addr().Unmap(), p.Dst.Addr().Unmap()
	if !src.IsValid() || !dstIP.IsValid() || src.Is4() != dstIP.Is4() {
		return dst, fmt.Errorf("hep: addresses %v and %v are not of one family", p.Src, p.Dst)
	}
	size := p.Size()
	if size > HEPMaxPacket {
		return dst, fmt.Errorf("%w: %d bytes, at most %d", ErrHEPTooLarge, size, HEPMaxPacket)
	}
	b := append(dst, hepMagic...)
	b = binary.BigEndian.AppendUint16(b, uint16(size))
	chunk := func(typ uint16, v []byte) {
		b = binary.BigEndian.AppendUint16(b, 0)
		b = binary.BigEndian.AppendUint16(b, typ)
		b = binary.BigEndian.AppendUint16(b, uint16(hepChunkHdrLen+len(v)))
		b = append(b, v...)
	}
	u16 := func(v uint16) []byte { return binary.BigEndian.AppendUint16(nil, v) }
	u32 := func(v uint32) []byte { return binary.BigEndian.AppendUint32(nil, v) }
	if src.Is4() {
		chunk(hepChunkFamily, []byte{hepFamilyIPv4})
		chunk(hepChunkProto, []byte{p.Proto})
		s4, d4 := src.As4(), dstIP.As4()
		chunk(hepChunkSrcIP4, s4[:])
		chunk(hepChunkDstIP4, d4[:])
	} else {
		chunk(hepChunkFamily, []byte{hepFamilyIPv6})
		chunk(hepChunkProto, []byte{p.Proto})
		s16, d16 := src.As16(), dstIP.As16()
		chunk(hepChunkSrcIP6, s16[:])
		chunk(hepChunkDstIP6, d16[:])
	}
	chunk(hepChunkSrcPort, u16(p.Src.Port()))
	chunk(hepChunkDstPort, u16(p.Dst.Port()))
	chunk(hepChunkTimeSec, u32(uint32(p.Time.Unix())))
	chunk(hepChunkTimeUsec, u32(uint32(p.Time.Nanosecond()/1000)))
	chunk(hepChunkPayloadType, []byte{p.Type})
	chunk(hepChunkCaptureID, u32(p.CaptureID))
	for _, s := range []struct {
		typ uint16
		v   string
	}{{hepChunkAuthKey, p.AuthKey}, {hepChunkNodeName, p.Node}, {hepChunkCorrelation, p.Correlation}} {
		if s.v != "" {
			chunk(s.typ, []byte(s.v))
		}
	}
	chunk(hepChunkPayload, p.Payload)
	return b, nil
}
