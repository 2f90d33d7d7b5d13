package hep

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"time"
)

// HEP3 framing (HEP3 rev 12): "HEP3", a 16-bit total length, then
// chunks of vendor id, type id and a length that counts the 6-byte chunk
// header. Vendor 0 is the generic chunk set.
const (
	magic       = "HEP3"
	headerLen   = 6
	chunkHdrLen = 6
	// MaxPacket is the largest packet sent: the 16-bit length field
	// allows 65535, a UDP datagram over IPv4 carries at most 65507.
	MaxPacket = 65507
)

// Generic chunk types used here.
const (
	chunkFamily      = 0x0001 // uint8: 2 IPv4, 10 IPv6
	chunkProto       = 0x0002 // uint8: IANA protocol number
	chunkSrcIP4      = 0x0003
	chunkDstIP4      = 0x0004
	chunkSrcIP6      = 0x0005
	chunkDstIP6      = 0x0006
	chunkSrcPort     = 0x0007 // uint16
	chunkDstPort     = 0x0008
	chunkTimeSec     = 0x0009 // uint32 seconds
	chunkTimeUsec    = 0x000a // uint32 microseconds of that second
	chunkPayloadType = 0x000b // uint8, below
	chunkCaptureID   = 0x000c // uint32
	chunkAuthKey     = 0x000e // string
	chunkPayload     = 0x000f
	chunkCorrelation = 0x0011 // string
	chunkNodeName    = 0x0013 // string
)

// Payload types.
const (
	TypeSIP  = 1 // the SIP message as captured
	TypeRTCP = 5 // an RTCP report as HOMER's JSON
)

// Address families and protocols as HEP writes them (the Linux values).
const (
	familyIPv4 = 2
	familyIPv6 = 10
	ProtoUDP   = 17
	ProtoTCP   = 6
)

// Packet is one captured message to export.
type Packet struct {
	Src, Dst  netip.AddrPort
	Proto     uint8 // ProtoUDP or ProtoTCP
	Time      time.Time
	Type      uint8 // TypeSIP or TypeRTCP
	CaptureID uint32
	// AuthKey, when set, is the collector's password (chunk 0x000e).
	AuthKey string
	// Node names the box to collectors that read chunk 0x0013.
	Node string
	// Correlation ties a report to its call: the Call-ID.
	Correlation string
	Payload     []byte
}

// ErrTooLarge is returned for a packet past MaxPacket.
var ErrTooLarge = errors.New("hep: packet too large")

// Size is the encoded length of p.
func (p *Packet) Size() int {
	ipLen := 4
	if p.Src.Addr().Unmap().Is6() {
		ipLen = 16
	}
	n := headerLen + 2*(chunkHdrLen+1) + 2*(chunkHdrLen+ipLen) + 2*(chunkHdrLen+2) + 2*(chunkHdrLen+4) +
		(chunkHdrLen + 1) + (chunkHdrLen + 4) + chunkHdrLen + len(p.Payload)
	for _, s := range []string{p.AuthKey, p.Node, p.Correlation} {
		if s != "" {
			n += chunkHdrLen + len(s)
		}
	}
	return n
}

// Append encodes p after dst. The addresses must be of one family.
//
// The correlation id comes before the payload: Kamailio's sipcapture
// reads it with strlen, and the next chunk's vendor id (0x0000) is what
// ends it; as the last chunk it would run past the packet.
func Append(dst []byte, p *Packet) ([]byte, error) {
	src, dstIP := p.Src.Addr().Unmap(), p.Dst.Addr().Unmap()
	if !src.IsValid() || !dstIP.IsValid() || src.Is4() != dstIP.Is4() {
		return dst, fmt.Errorf("hep: addresses %v and %v are not of one family", p.Src, p.Dst)
	}
	size := p.Size()
	if size > MaxPacket {
		return dst, fmt.Errorf("%w: %d bytes, at most %d", ErrTooLarge, size, MaxPacket)
	}
	b := append(dst, magic...)
	b = binary.BigEndian.AppendUint16(b, uint16(size))
	chunk := func(typ uint16, v []byte) {
		b = binary.BigEndian.AppendUint16(b, 0)
		b = binary.BigEndian.AppendUint16(b, typ)
		b = binary.BigEndian.AppendUint16(b, uint16(chunkHdrLen+len(v)))
		b = append(b, v...)
	}
	u16 := func(v uint16) []byte { return binary.BigEndian.AppendUint16(nil, v) }
	u32 := func(v uint32) []byte { return binary.BigEndian.AppendUint32(nil, v) }
	if src.Is4() {
		chunk(chunkFamily, []byte{familyIPv4})
		chunk(chunkProto, []byte{p.Proto})
		s4, d4 := src.As4(), dstIP.As4()
		chunk(chunkSrcIP4, s4[:])
		chunk(chunkDstIP4, d4[:])
	} else {
		chunk(chunkFamily, []byte{familyIPv6})
		chunk(chunkProto, []byte{p.Proto})
		s16, d16 := src.As16(), dstIP.As16()
		chunk(chunkSrcIP6, s16[:])
		chunk(chunkDstIP6, d16[:])
	}
	chunk(chunkSrcPort, u16(p.Src.Port()))
	chunk(chunkDstPort, u16(p.Dst.Port()))
	chunk(chunkTimeSec, u32(uint32(p.Time.Unix())))
	chunk(chunkTimeUsec, u32(uint32(p.Time.Nanosecond()/1000)))
	chunk(chunkPayloadType, []byte{p.Type})
	chunk(chunkCaptureID, u32(p.CaptureID))
	for _, s := range []struct {
		typ uint16
		v   string
	}{{chunkAuthKey, p.AuthKey}, {chunkNodeName, p.Node}, {chunkCorrelation, p.Correlation}} {
		if s.v != "" {
			chunk(s.typ, []byte(s.v))
		}
	}
	chunk(chunkPayload, p.Payload)
	return b, nil
}
