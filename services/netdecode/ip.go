package netdecode

import (
	"encoding/binary"
	"net/netip"
)

// IP protocol numbers we follow.
const (
	protoIPIP     = 4
	protoTCP      = 6
	protoUDP      = 17
	protoIPv6     = 41
	protoHopByHop = 0
	protoRouting  = 43
	protoFragment = 44
	protoAH       = 51
	protoDstOpts  = 60
)

// Tunnels and encryption (IANA protocol numbers): GRE and MPLS in IP are
// opened (tunnel.go); EtherIP and L2TPv3 are counted as tunnels not
// decoded, ESP as encrypted.
const (
	protoGRE      = 47
	protoESP      = 50
	protoEtherIP  = 97
	protoL2TPv3   = 115
	protoMPLSinIP = 137
)

const (
	ipv4MinHeader = 20
	ipv6Header    = 40
	ipv6FragHdr   = 8
)

// ipPacket is one IP datagram's transport view.
type ipPacket struct {
	src, dst   netip.Addr
	proto      uint8
	payload    []byte
	fragmented bool
	frames     []uint64 // fragment tags of a reassembled datagram (TrackFrames)
}

func (d *Decoder) ip(b []byte, depth int) {
	if len(b) < 1 {
		d.c.skip(SkipTruncated)
		return
	}
	switch b[0] >> 4 {
	case 4:
		d.ipv4(b, depth)
	case 6:
		d.ipv6(b, depth)
	default:
		d.c.skip(SkipBadIP)
	}
}

func (d *Decoder) ipv4(b []byte, depth int) {
	if len(b) < ipv4MinHeader {
		d.c.skip(SkipTruncated)
		return
	}
	ihl := int(b[0]&0x0F) * 4
	total := int(binary.BigEndian.Uint16(b[2:]))
	if ihl < ipv4MinHeader || total < ihl {
		d.c.skip(SkipBadIP)
		return
	}
	if total > len(b) {
		d.c.skip(SkipTruncated)
		return
	}
	d.n.ipv4++
	// Field by field, and handed on by pointer: a literal copied by
	// value stalls on the stores just made (store forwarding).
	var p ipPacket
	p.src = netip.AddrFrom4([4]byte(b[12:16]))
	p.dst = netip.AddrFrom4([4]byte(b[16:20]))
	p.proto, p.payload = b[9], b[ihl:total] // drops Ethernet padding
	flags := binary.BigEndian.Uint16(b[6:])
	more, off := flags&0x2000 != 0, int(flags&0x1FFF)*8
	if more || off != 0 {
		id := uint32(binary.BigEndian.Uint16(b[4:]))
		whole, tags, done := d.frag.add(d.now, fragKey{src: p.src, dst: p.dst, id: id, proto: p.proto}, off, more, p.payload, d.tag)
		if !done {
			return
		}
		p.payload, p.fragmented, p.frames = whole, true, tags
	}
	d.transport(&p, depth)
}

func (d *Decoder) ipv6(b []byte, depth int) {
	if len(b) < ipv6Header {
		d.c.skip(SkipTruncated)
		return
	}
	plen := int(binary.BigEndian.Uint16(b[4:]))
	if ipv6Header+plen > len(b) {
		d.c.skip(SkipTruncated)
		return
	}
	d.n.ipv6++
	var p ipPacket
	p.src = netip.AddrFrom16([16]byte(b[8:24]))
	p.dst = netip.AddrFrom16([16]byte(b[24:40]))
	next, rest := b[6], b[ipv6Header:ipv6Header+plen]
	for i := 0; ; i++ {
		if i > maxEncapsulation {
			d.c.skip(SkipTooDeep)
			return
		}
		switch next {
		case protoHopByHop, protoRouting, protoDstOpts, protoAH:
			if len(rest) < 8 {
				d.c.skip(SkipTruncated)
				return
			}
			n := (int(rest[1]) + 1) * 8
			if next == protoAH {
				n = (int(rest[1]) + 2) * 4
			}
			if n > len(rest) {
				d.c.skip(SkipTruncated)
				return
			}
			next, rest = rest[0], rest[n:]
			continue
		case protoFragment:
			if len(rest) < ipv6FragHdr {
				d.c.skip(SkipTruncated)
				return
			}
			fo := binary.BigEndian.Uint16(rest[2:])
			off, more := int(fo&0xFFF8), fo&1 != 0
			id := binary.BigEndian.Uint32(rest[4:])
			p.proto = rest[0]
			whole, tags, done := d.frag.add(d.now, fragKey{src: p.src, dst: p.dst, id: id, proto: p.proto, v6: true}, off, more, rest[ipv6FragHdr:], d.tag)
			if !done {
				return
			}
			p.payload, p.fragmented, p.frames = whole, true, tags
			d.transport(&p, depth)
			return
		default:
			p.proto, p.payload = next, rest
			d.transport(&p, depth)
			return
		}
	}
}

func (d *Decoder) transport(p *ipPacket, depth int) {
	switch p.proto {
	case protoUDP:
		d.udp(p, depth)
	case protoTCP:
		d.tcp(p)
	case protoIPIP, protoIPv6:
		if depth >= maxEncapsulation {
			d.c.skip(SkipTooDeep)
			return
		}
		d.ip(p.payload, depth+1)
	case protoGRE, protoMPLSinIP:
		if depth >= maxEncapsulation {
			d.c.skip(SkipTooDeep)
			return
		}
		if p.proto == protoGRE {
			d.gre(p.payload, depth)
		} else {
			d.mpls(p.payload, depth+1)
		}
	case protoEtherIP, protoL2TPv3:
		d.c.skip(SkipTunnel)
	case protoESP:
		d.c.skip(SkipEncrypted)
	default:
		d.c.skip(SkipProto)
	}
}

const udpHeader = 8

func (d *Decoder) udp(p *ipPacket, depth int) {
	b := p.payload
	if len(b) < udpHeader {
		d.c.skip(SkipBadUDP)
		return
	}
	n := int(binary.BigEndian.Uint16(b[4:]))
	switch {
	case n == 0 && p.src.Is6(): // jumbogram: length from IP
		n = len(b)
	case n < udpHeader:
		d.c.skip(SkipBadUDP)
		return
	case n > len(b):
		d.c.skip(SkipTruncated)
		return
	}
	dport := binary.BigEndian.Uint16(b[2:])
	for _, v := range d.vxlanPorts[:d.nVXLAN] {
		if dport == v {
			if depth >= maxEncapsulation {
				d.c.skip(SkipTooDeep)
				return
			}
			d.vxlan(b[udpHeader:n], depth)
			return
		}
	}
	d.n.udp++
	frames := p.frames
	if d.opt.TrackFrames && frames == nil {
		d.tags = append(d.tags[:0], d.tag)
		frames = d.tags
	}
	// Filled field by field in the decoder's own Datagram: a literal is
	// built on the stack and copied, a store-forwarding stall a packet.
	g := &d.dg
	g.Frames, g.Time = frames, d.now
	g.Src = netip.AddrPortFrom(p.src, binary.BigEndian.Uint16(b[0:]))
	g.Dst = netip.AddrPortFrom(p.dst, dport)
	g.Payload, g.Fragmented = b[udpHeader:n], p.fragmented
	d.h.UDP(g)
	g.Payload, g.Frames = nil, nil // borrowed: not kept alive past the call
}
