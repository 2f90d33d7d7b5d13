package netdecode

import (
	"encoding/binary"
	"net/netip"
	"slices"

	"fieldtap/drivers/wire"
)

// Location is where a frame's innermost IP packet and its transport
// header sit: what the recorder needs to keep RTP headers only and what a
// search matches addresses on, without a Decoder's tables.
type Location struct {
	Src, Dst netip.AddrPort // ports are 0 for protocols other than UDP and TCP
	Proto    uint8          // IP protocol number
	// Payload is the offset in the frame of the transport payload (after
	// the UDP or TCP header); 0 when the protocol is neither.
	Payload int
	// Fragment is set when the packet is a fragment: only the first one
	// carries the transport header, and then Payload is its offset.
	Fragment bool
	// OuterSrc and OuterDst are the outermost packet's addresses when the
	// frame came through a tunnel the decoder opens (remote SPAN: GRE,
	// ERSPAN, VXLAN, MPLS); zero otherwise. Src and Dst are then the
	// mirrored packet's.
	OuterSrc, OuterDst netip.AddrPort
	// transport is the offset of the transport header, for a tunnel's.
	transport int
}

// Tunnelled reports whether the packet came through a tunnel an IP packet
// carried (GRE, ERSPAN, VXLAN, MPLS in GRE); MPLS straight on Ethernet has
// no outer addresses and is not.
func (l Location) Tunnelled() bool { return l.OuterSrc.IsValid() }

// Locate finds the innermost IP packet of a frame of the given link type,
// opening the tunnels a Decoder opens (vxlanPorts as Options.VXLANPorts:
// nil is DefaultVXLANPort). It reports false when the frame holds no IP
// packet it can read (another EtherType, a truncated header, a non-first
// fragment); a tunnel whose inside it cannot read gives the outer packet.
func Locate(link wire.LinkType, b []byte, vxlanPorts []uint16) (Location, bool) {
	if vxlanPorts == nil {
		vxlanPorts = []uint16{DefaultVXLANPort}
	}
	off, et, ok := locateLink(link, b)
	if !ok {
		return Location{}, false
	}
	var (
		found bool
		last  Location
	)
	for depth := 0; depth <= maxEncapsulation; depth++ {
		switch et {
		case etherIPv4, etherIPv6:
			l, ok := locateIP(b, off)
			if !ok {
				return last, found
			}
			if found {
				l.OuterSrc, l.OuterDst = last.OuterSrc, last.OuterDst
				if !l.Tunnelled() {
					l.OuterSrc, l.OuterDst = last.Src, last.Dst
				}
			}
			last, found = l, true
			if off, et, ok = tunnelInside(b, l, vxlanPorts); !ok {
				return last, true
			}
		case etherVLAN, etherQinQ, etherQinQOld:
			if len(b) < off+vlanTag {
				return last, found
			}
			et, off = binary.BigEndian.Uint16(b[off+2:]), off+vlanTag
		case etherPPPoESess:
			if len(b) < off+pppoeHeader+2 {
				return last, found
			}
			off += pppoeHeader
			if et, ok = pppEtherType(binary.BigEndian.Uint16(b[off:])); !ok {
				return last, found
			}
			off += 2
		case etherMPLS, etherMPLSMulti:
			if off, et, ok = locateMPLS(b, off); !ok {
				return last, found
			}
		case etherTEB:
			if len(b) < off+ethHeader {
				return last, found
			}
			et, off = binary.BigEndian.Uint16(b[off+12:]), off+ethHeader
		default:
			return last, found
		}
	}
	return last, found
}

// tunnelInside returns where the packet l carries a frame or a packet
// through a tunnel the decoder opens, and what it is (etherTEB for an
// Ethernet frame); false when l is no such tunnel or is truncated.
func tunnelInside(b []byte, l Location, vxlanPorts []uint16) (int, uint16, bool) {
	if l.Fragment {
		return 0, 0, false
	}
	off := l.transport
	switch l.Proto {
	case protoUDP:
		if l.Payload == 0 || len(b) < l.Payload+vxlanHeader || !slices.Contains(vxlanPorts, l.Dst.Port()) {
			return 0, 0, false
		}
		return l.Payload + vxlanHeader, etherTEB, true
	case protoMPLSinIP:
		return off, etherMPLS, true
	case protoGRE:
		if len(b) < off+greHeader || b[off]&greRouting != 0 || b[off+1]&greVersion != 0 {
			return 0, 0, false
		}
		n := greHeader
		for _, f := range [...]byte{greChecksum, greKey, greSeq} {
			if b[off]&f != 0 {
				n += 4
			}
		}
		seq := b[off]&greSeq != 0
		proto, off := binary.BigEndian.Uint16(b[off+2:]), off+n
		switch proto {
		case etherTEB, etherIPv4, etherIPv6, etherMPLS, etherMPLSMulti:
			return off, proto, true
		case etherERSPAN:
			if !seq { // type I
				return off, etherTEB, true
			}
			if len(b) < off+erspan2Header || b[off]>>4 != 1 {
				return 0, 0, false
			}
			return off + erspan2Header, etherTEB, true
		case etherERSPAN3:
			if len(b) < off+erspan3Header || b[off]>>4 != 2 {
				return 0, 0, false
			}
			n := erspan3Header
			if b[off+11]&1 != 0 {
				n += erspan3Sub
			}
			switch (b[off+10] >> 2) & 0x1F {
			case 0:
				return off + n, etherTEB, true
			case 2:
				if len(b) <= off+n {
					return 0, 0, false
				}
				if b[off+n]>>4 == 6 {
					return off + n, etherIPv6, true
				}
				return off + n, etherIPv4, true
			}
		}
	}
	return 0, 0, false
}

// locateMPLS pops a label stack at off and says what follows it, as
// Decoder.mpls reads it.
func locateMPLS(b []byte, off int) (int, uint16, bool) {
	for range maxEncapsulation {
		if len(b) < off+mplsEntry {
			return 0, 0, false
		}
		bottom := b[off+2]&1 != 0
		off += mplsEntry
		if !bottom {
			continue
		}
		if len(b) <= off {
			return 0, 0, false
		}
		switch b[off] >> 4 {
		case 4:
			return off, etherIPv4, true
		case 6:
			return off, etherIPv6, true
		case 0:
			return off + pwControlWord, etherTEB, true
		}
		return 0, 0, false
	}
	return 0, 0, false
}

// locateLink returns the offset after the link header and the EtherType
// (or the equivalent) of what follows.
func locateLink(link wire.LinkType, b []byte) (int, uint16, bool) {
	switch link {
	case wire.LinkEthernet:
		if len(b) < ethHeader {
			return 0, 0, false
		}
		return ethHeader, binary.BigEndian.Uint16(b[12:]), true
	case wire.LinkLinuxSLL:
		if len(b) < sllHeader {
			return 0, 0, false
		}
		return sllHeader, binary.BigEndian.Uint16(b[14:]), true
	case linkTypeSLL2:
		if len(b) < sll2Header {
			return 0, 0, false
		}
		return sll2Header, binary.BigEndian.Uint16(b[0:]), true
	case wire.LinkRaw, linkTypeRawAlt, linkTypeRawBSD, wire.LinkIPv4, wire.LinkIPv6:
		if len(b) < 1 {
			return 0, 0, false
		}
		if b[0]>>4 == 6 {
			return 0, etherIPv6, true
		}
		return 0, etherIPv4, true
	case wire.LinkNull, wire.LinkLoop:
		if len(b) < nullHeader {
			return 0, 0, false
		}
		f := nullFamily(binary.BigEndian.Uint32(b))
		if f == 0 && link == wire.LinkNull {
			f = nullFamily(binary.LittleEndian.Uint32(b))
		}
		return nullHeader, f, f != 0
	case wire.LinkPPP:
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
	l.transport = off
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
