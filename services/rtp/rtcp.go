package rtp

import (
	"encoding/binary"
	"errors"
	"net/netip"
	"time"
)

// RTCP packet types (RFC 3550 §12.1).
const (
	rtcpSR = 200
	rtcpRR = 201
	// maxRTCPPackets bounds the packets walked in one compound datagram.
	maxRTCPPackets = 16
	// maxReportBlocks bounds blocks kept per report: RC is 5 bits (31),
	// a two-party call carries one.
	maxReportBlocks = 4
)

// ErrRTCP is returned for a datagram that is not a valid RTCP compound.
var ErrRTCP = errors.New("rtcp: malformed")

// ReportBlock is one reception report as the endpoint wrote it.
type ReportBlock struct {
	SSRC           uint32 // the stream reported on
	FractionLost   uint8  // /256 since the last report
	CumulativeLost int32  // 24-bit signed
	HighestSeq     uint32 // extended
	Jitter         uint32 // RTP timestamp units
	LSR            uint32
	DLSR           uint32 // 1/65536 s
}

// Report is one SR or RR.
type Report struct {
	Time       time.Time
	Src        netip.AddrPort
	Dst        netip.AddrPort
	Type       string // SR or RR
	SenderSSRC uint32
	// Sender info (SR only).
	NTP         uint64
	RTPTime     uint32
	PacketCount uint32
	OctetCount  uint32
	Blocks      []ReportBlock
	// BlocksDropped counts blocks past maxReportBlocks.
	BlocksDropped int
}

// ParseRTCP parses the SR and RR packets of a compound RTCP datagram;
// other packet types (SDES, BYE, APP, XR) are skipped.
func ParseRTCP(b []byte) ([]Report, error) {
	var out []Report
	for n := 0; len(b) >= 4 && n < maxRTCPPackets; n++ {
		if b[0]>>6 != version2 {
			return out, ErrRTCP
		}
		size := 4 * (int(binary.BigEndian.Uint16(b[2:])) + 1)
		if size > len(b) {
			return out, ErrRTCP
		}
		p, rc := b[:size], int(b[0]&0x1F)
		b = b[size:]
		var r Report
		off := 8
		switch p[1] {
		case rtcpSR:
			if len(p) < 28 {
				return out, ErrRTCP
			}
			r = Report{Type: "SR", NTP: binary.BigEndian.Uint64(p[8:]), RTPTime: binary.BigEndian.Uint32(p[16:]),
				PacketCount: binary.BigEndian.Uint32(p[20:]), OctetCount: binary.BigEndian.Uint32(p[24:])}
			off = 28
		case rtcpRR:
			r = Report{Type: "RR"}
		default:
			continue
		}
		if len(p) < 8 {
			return out, ErrRTCP
		}
		r.SenderSSRC = binary.BigEndian.Uint32(p[4:])
		r.Blocks = []ReportBlock{}
		for i := 0; i < rc && off+24 <= len(p); i++ {
			if len(r.Blocks) >= maxReportBlocks {
				r.BlocksDropped++
				off += 24
				continue
			}
			q := p[off:]
			lost := int32(uint32(q[5])<<16|uint32(q[6])<<8|uint32(q[7])) << 8 >> 8 // sign-extend 24 bits
			r.Blocks = append(r.Blocks, ReportBlock{
				SSRC: binary.BigEndian.Uint32(q), FractionLost: q[4], CumulativeLost: lost,
				HighestSeq: binary.BigEndian.Uint32(q[8:]), Jitter: binary.BigEndian.Uint32(q[12:]),
				LSR: binary.BigEndian.Uint32(q[16:]), DLSR: binary.BigEndian.Uint32(q[20:]),
			})
			off += 24
		}
		out = append(out, r)
	}
	return out, nil
}
