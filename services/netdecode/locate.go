package netdecode

import (
	"encoding/binary"
	"net/netip"

	"github.com/gopacket/gopacket/layers"
)

// Location is where a frame's first IP packet and its transport header
// sit: what the recorder needs to keep RTP headers only and what a search
// matches addresses on, without a Decoder's tables.
type Location struct {
	Src, Dst netip.AddrPort // ports are 0 for protocols other than UDP and TCP
	Proto    uint8          // IP protocol number
	// Payload is the offset in the frame of the transport payload (after
	// the UDP or TCP header); 0 when the protocol is neither.
	Payload int
	// Fragment is set when the packet is a fragment: only the first one
	// carries the transport header, and then Payload is its offset.
	Fragment bool
}

// Locate finds the first IP packet of a frame of the given link type. It
// reports false when the frame holds no IP packet it can read (another
// EtherType, a truncated header, a non-first fragment).
func Locate(link layers.LinkType, b []byte) (Location, bool) {
	off, et, ok := locateLink(link, b)
	if !ok {
		return Location{}, false
	}
	for depth := 0; depth <= maxEncapsulation; depth++ {
		switch et {
		case etherIPv4, etherIPv6:
			return locateIP(b, off)
		case etherVLAN, etherQinQ, etherQinQOld:
			if len(b) < off+vlanTag {
				return Location{}, false
			}
			et, off = binary.BigEndian.Uint16(b[off+2:]), off+vlanTag
		case etherPPPoESess:
			if len(b) < off+pppoeHeader+2 {
				return Location{}, false
			}
			off += pppoeHeader
			if et, ok = pppEtherType(binary.BigEndian.Uint16(b[off:])); !ok {
				return Location{}, false
			}
			off += 2
		default:
			return Location{}, false
		}
	}
	return Location{}, false
}

// locateLink returns the offset after the link header and the EtherType
// (or the equivalent) of what follows.
func locateLink(link layers.LinkType, b []byte) (int, uint16, bool) {
	switch link {
	case layers.LinkTypeEthernet:
		if len(b) < ethHeader {
			return 0, 0, false
		}
		return ethHeader, binary.BigEndian.Uint16(b[12:]), true
	case layers.LinkTypeLinuxSLL:
		if len(b) < sllHeader {
			return 0, 0, false
		}
		return sllHeader, binary.BigEndian.Uint16(b[14:]), true
	case linkTypeSLL2:
		if len(b) < sll2Header {
			return 0, 0, false
		}
		return sll2Header, binary.BigEndian.Uint16(b[0:]), true
	case layers.LinkTypeRaw, linkTypeRawAlt, linkTypeRawBSD, layers.LinkTypeIPv4, layers.LinkTypeIPv6:
		if len(b) < 1 {
			return 0, 0, false
		}
		if b[0]>>4 == 6 {
			return 0, etherIPv6, true
		}
		return 0, etherIPv4, true
	case layers.LinkTypeNull, layers.LinkTypeLoop:
		if len(b) < nullHeader {
			return 0, 0, false
		}
		f := nullFamily(binary.BigEndian.Uint32(b))
		if f == 0 && link == layers.LinkTypeNull {
			f = nullFamily(binary.LittleEndian.Uint32(b))
		}
		return nullHeader, f, f != 0
	case layers.LinkTypePPP:
		off := 0
		if len(b) >= 2 && b[0] == 0xFF && b[1] == 0x03 {
			off = 2
		}
		if len(b) < off+2 {
			return 0, 0, false
		}
		et, ok := pppEtherType(binary.BigEndian.Uint16(b[off:]))
		return off + 2, et, ok
	}
	return 0, 0, false
}

func pppEtherType(proto uint16) (uint16, bool) {
	switch proto {
	case pppIPv4:
		return etherIPv4, true
	case pppIPv6:
		return etherIPv6, true
	}
	return 0, false
}

func locateIP(b []byte, off int) (Location, bool) {
	if len(b) <= off {
		return Location{}, false
	}
	var l Location
	switch b[off] >> 4 {
	case 4:
		if len(b) < off+ipv4MinHeader {
			return Location{}, false
		}
		ihl := int(b[off]&0x0F) * 4
		if ihl < ipv4MinHeader || len(b) < off+ihl {
			return Location{}, false
		}
		flags := binary.BigEndian.Uint16(b[off+6:])
		if flags&0x1FFF != 0 {
			return Location{}, false // a later fragment: no transport header
		}
		l.Fragment = flags&0x2000 != 0
		l.Proto = b[off+9]
		src, dst := netip.AddrFrom4([4]byte(b[off+12:])), netip.AddrFrom4([4]byte(b[off+16:]))
		return locateTransport(b, off+ihl, l, src, dst)
	case 6:
		if len(b) < off+ipv6Header {
			return Location{}, false
		}
		src, dst := netip.AddrFrom16([16]byte(b[off+8:])), netip.AddrFrom16([16]byte(b[off+24:]))
		next, p := b[off+6], off+ipv6Header
		for i := 0; i <= maxEncapsulation; i++ {
			switch next {
			case protoHopByHop, protoRouting, protoDstOpts, protoAH:
				if len(b) < p+8 {
					return Location{}, false
				}
				n := (int(b[p+1]) + 1) * 8
				if next == protoAH {
					n = (int(b[p+1]) + 2) * 4
				}
				next, p = b[p], p+n
			case protoFragment:
				if len(b) < p+ipv6FragHdr {
					return Location{}, false
				}
				fo := binary.BigEndian.Uint16(b[p+2:])
				if fo&0xFFF8 != 0 {
					return Location{}, false
				}
				l.Fragment = fo&1 != 0
				next, p = b[p], p+ipv6FragHdr
			default:
				l.Proto = next
				return locateTransport(b, p, l, src, dst)
			}
		}
	}
	return Location{}, false
}

func locateTransport(b []byte, off int, l Location, src, dst netip.Addr) (Location, bool) {
	l.Src, l.Dst = netip.AddrPortFrom(src, 0), netip.AddrPortFrom(dst, 0)
	switch l.Proto {
	case protoUDP:
		if len(b) < off+udpHeader {
			return l, true
		}
		l.Payload = off + udpHeader
	case protoTCP:
		if len(b) < off+tcpMinHeader {
			return l, true
		}
		hl := int(b[off+12]>>4) * 4
		if hl < tcpMinHeader || len(b) < off+hl {
			return l, true
		}
		l.Payload = off + hl
	default:
		return l, true
	}
	l.Src = netip.AddrPortFrom(src, binary.BigEndian.Uint16(b[off:]))
	l.Dst = netip.AddrPortFrom(dst, binary.BigEndian.Uint16(b[off+2:]))
	return l, true
}
