package rtp

import (
	"encoding/binary"
	"errors"
)

const (
	headerLen = 12 // RFC 3550 §5.1 fixed header
	version2  = 2
	// RFC 5761 §4: with RTP and RTCP on one port, a second byte of
	// 192..223 is RTCP (payload types 64..95 are never RTP).
	rtcpTypeMin = 192
	rtcpTypeMax = 223
)

// Errors from Header.Decode.
var (
	ErrShort   = errors.New("rtp: shorter than its header")
	ErrVersion = errors.New("rtp: not version 2")
)

// Header is a decoded RTP header. Decode resets every field; Payload
// points into the bytes given to Decode.
type Header struct {
	Marker    bool
	PT        uint8
	Seq       uint16
	TS        uint32
	SSRC      uint32
	CSRCs     int
	Extension bool
	Padding   int // padding bytes removed from Payload
	Payload   []byte
	// Truncated is set when the CSRC list, extension or padding claims
	// more bytes than the packet has; Payload is then empty.
	Truncated bool
}

// Decode decodes an RTP packet without allocating.
func (h *Header) Decode(b []byte) error {
	*h = Header{}
	if len(b) < headerLen {
		return ErrShort
	}
	if b[0]>>6 != version2 {
		return ErrVersion
	}
	h.CSRCs = int(b[0] & 0x0F)
	h.Extension = b[0]&0x10 != 0
	h.Marker = b[1]&0x80 != 0
	h.PT = b[1] & 0x7F
	h.Seq = binary.BigEndian.Uint16(b[2:])
	h.TS = binary.BigEndian.Uint32(b[4:])
	h.SSRC = binary.BigEndian.Uint32(b[8:])
	off := headerLen + 4*h.CSRCs
	if h.Extension && off+4 <= len(b) {
		off += 4 + 4*int(binary.BigEndian.Uint16(b[off+2:]))
	} else if h.Extension {
		off = len(b) + 1
	}
	end := len(b)
	if b[0]&0x20 != 0 && end > 0 {
		h.Padding = int(b[end-1])
		end -= h.Padding
	}
	if off > end || h.Padding < 0 {
		h.Truncated = true
		return nil
	}
	h.Payload = b[off:end]
	return nil
}

// IsRTCP reports whether b is an RTCP packet by RFC 5761's rule.
func IsRTCP(b []byte) bool {
	return len(b) >= 8 && b[0]>>6 == version2 && b[1] >= rtcpTypeMin && b[1] <= rtcpTypeMax
}

// LooksLikeRTP reports whether b could be an RTP packet: version 2, a
// full header, not RTCP.
func LooksLikeRTP(b []byte) bool {
	return len(b) >= headerLen && b[0]>>6 == version2 && !IsRTCP(b)
}
