package wire

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"time"
)

// Why a HEP3 packet could not be read, as a receiver counts it.
const (
	HEPBadMagic   = "hep_bad_magic"  // it does not start with "HEP3"
	HEPShort      = "hep_short"      // fewer bytes than its length field or a chunk header needs
	HEPBadLength  = "hep_bad_length" // a length field that cannot be: below its header, past its packet
	HEPBadChunk   = "hep_bad_chunk"  // a known chunk whose value has the wrong size or meaning
	HEPIncomplete = "hep_incomplete" // addresses, ports, time or payload missing, or of mixed families
	HEPCompressed = "hep_compressed" // the payload came compressed (chunk 0x0010), which is not read
)

// HEPError is a packet refused by DecodeHEP: Cause is one of the HEP…
// causes above, Detail says what exactly.
type HEPError struct {
	Cause  string
	Detail string
}

func (e *HEPError) Error() string { return "hep: " + e.Cause + ": " + e.Detail }

func hepErr(cause, format string, args ...any) error {
	return &HEPError{Cause: cause, Detail: fmt.Sprintf(format, args...)}
}

// HEPMessage is one decoded HEP3 packet. Its byte slices borrow the
// decoded buffer.
type HEPMessage struct {
	Src, Dst netip.AddrPort
	Proto    uint8 // IANA protocol number: HEPProtoUDP, HEPProtoTCP, or what the agent wrote
	Time     time.Time
	Type     uint8 // HEPTypeSIP, HEPTypeRTP, HEPTypeRTCP, or what the agent wrote
	// CaptureID is the agent's id (chunk 0x000c); HasCaptureID is false
	// when the packet carries none.
	CaptureID    uint32
	HasCaptureID bool
	AuthKey      []byte // chunk 0x000e; nil when absent
	Correlation  []byte // chunk 0x0011; nil when absent
	Payload      []byte
	// KeepAlive is true for a packet with the keep-alive chunk and no
	// payload: the agent saying it is there.
	KeepAlive bool
	// Unknown counts chunks skipped: of another vendor, or types this
	// reader does not use (node name, and any later addition).
	Unknown int
}

// HEPLength reads the header at the start of a stream's next packet and
// returns the packet's total length. b must hold HEPHeaderLen bytes.
func HEPLength(b []byte) (int, error) {
	if len(b) < HEPHeaderLen {
		return 0, hepErr(HEPShort, "%d bytes, a header is %d", len(b), HEPHeaderLen)
	}
	if string(b[:4]) != hepMagic {
		return 0, hepErr(HEPBadMagic, "starts %q, want %q", b[:4], hepMagic)
	}
	n := int(binary.BigEndian.Uint16(b[4:]))
	if n < HEPHeaderLen {
		return 0, hepErr(HEPBadLength, "length field %d is below the header's %d", n, HEPHeaderLen)
	}
	return n, nil
}

// DecodeHEP reads one whole HEP3 packet (a UDP datagram, or a stream
// packet of HEPLength bytes) into m, resetting every field first. The
// packet is refused with a *HEPError unless its framing holds, every
// chunk it uses has a value of the right size, and it carries a family,
// both addresses and ports of that family, a time and a payload; a
// keep-alive without payload is accepted with KeepAlive set.
func DecodeHEP(b []byte, m *HEPMessage) error {
	*m = HEPMessage{}
	n, err := HEPLength(b)
	if err != nil {
		return err
	}
	switch {
	case n > len(b):
		return hepErr(HEPShort, "length field %d, %d bytes", n, len(b))
	case n < len(b):
		return hepErr(HEPBadLength, "length field %d, %d bytes: trailing bytes", n, len(b))
	}
	var (
		family           uint8
		src4, dst4       netip.Addr
		src6, dst6       netip.Addr
		sport, dport     uint16
		hasSport, hasDpt bool
		sec, usec        uint32
		hasSec           bool
		hasPayload       bool
		compressed       bool
	)
	for off := HEPHeaderLen; off < len(b); {
		if len(b)-off < hepChunkHdrLen {
			return hepErr(HEPShort, "%d bytes left at offset %d, a chunk header is %d", len(b)-off, off, hepChunkHdrLen)
		}
		vendor := binary.BigEndian.Uint16(b[off:])
		typ := binary.BigEndian.Uint16(b[off+2:])
		cl := int(binary.BigEndian.Uint16(b[off+4:]))
		if cl < hepChunkHdrLen || cl > len(b)-off {
			return hepErr(HEPBadLength, "chunk 0x%04x at offset %d: length %d, %d bytes left", typ, off, cl, len(b)-off)
		}
		v := b[off+hepChunkHdrLen : off+cl]
		off += cl
		if vendor != 0 {
			m.Unknown++
			continue
		}
		size := func(want int) error {
			if len(v) != want {
				return hepErr(HEPBadChunk, "chunk 0x%04x: %d bytes, want %d", typ, len(v), want)
			}
			return nil
		}
		switch typ {
		case hepChunkFamily, hepChunkProto, hepChunkPayloadType:
			if err := size(1); err != nil {
				return err
			}
			switch typ {
			case hepChunkFamily:
				family = v[0]
			case hepChunkProto:
				m.Proto = v[0]
			default:
				m.Type = v[0]
			}
		case hepChunkSrcIP4, hepChunkDstIP4:
			if err := size(4); err != nil {
				return err
			}
			a := netip.AddrFrom4([4]byte(v))
			if typ == hepChunkSrcIP4 {
				src4 = a
			} else {
				dst4 = a
			}
		case hepChunkSrcIP6, hepChunkDstIP6:
			if err := size(16); err != nil {
				return err
			}
			a := netip.AddrFrom16([16]byte(v))
			if typ == hepChunkSrcIP6 {
				src6 = a
			} else {
				dst6 = a
			}
		case hepChunkSrcPort, hepChunkDstPort, hepChunkKeepAlive:
			if err := size(2); err != nil {
				return err
			}
			switch typ {
			case hepChunkSrcPort:
				sport, hasSport = binary.BigEndian.Uint16(v), true
			case hepChunkDstPort:
				dport, hasDpt = binary.BigEndian.Uint16(v), true
			default:
				m.KeepAlive = true
			}
		case hepChunkTimeSec, hepChunkTimeUsec, hepChunkCaptureID:
			if err := size(4); err != nil {
				return err
			}
			switch typ {
			case hepChunkTimeSec:
				sec, hasSec = binary.BigEndian.Uint32(v), true
			case hepChunkTimeUsec:
				usec = binary.BigEndian.Uint32(v)
			default:
				m.CaptureID, m.HasCaptureID = binary.BigEndian.Uint32(v), true
			}
		case hepChunkAuthKey:
			m.AuthKey = v
		case hepChunkCorrelation:
			m.Correlation = v
		case hepChunkPayload:
			m.Payload, hasPayload = v, true
		case hepChunkCompressed:
			compressed = true
		default:
			m.Unknown++
		}
	}
	if m.KeepAlive && !hasPayload && !compressed {
		return nil
	}
	if compressed && !hasPayload {
		return hepErr(HEPCompressed, "the payload is in a compressed chunk (0x0010)")
	}
	if usec >= 1_000_000 {
		return hepErr(HEPBadChunk, "microseconds %d: want below 1000000", usec)
	}
	var src, dst netip.Addr
	switch family {
	case hepFamilyIPv4:
		src, dst = src4, dst4
	case hepFamilyIPv6:
		src, dst = src6, dst6
	default:
		return hepErr(HEPIncomplete, "address family %d: want %d (IPv4) or %d (IPv6)", family, hepFamilyIPv4, hepFamilyIPv6)
	}
	switch {
	case !src.IsValid() || !dst.IsValid():
		return hepErr(HEPIncomplete, "no source or destination address of family %d", family)
	case !hasSport || !hasDpt:
		return hepErr(HEPIncomplete, "no source or destination port")
	case !hasSec:
		return hepErr(HEPIncomplete, "no timestamp (chunk 0x0009)")
	case !hasPayload:
		return hepErr(HEPIncomplete, "no payload (chunk 0x000f)")
	}
	m.Src, m.Dst = netip.AddrPortFrom(src, sport), netip.AddrPortFrom(dst, dport)
	m.Time = time.Unix(int64(sec), int64(usec)*1000)
	return nil
}
