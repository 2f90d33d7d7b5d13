package netdecode

import (
	"encoding/binary"

	"fieldtap/drivers/wire"
)

// Link types drivers/wire does not name: other systems' numbers for raw
// IP, and Linux cooked capture v2.
const (
	linkTypeRawAlt wire.LinkType = 12  // DLT_RAW as OpenBSD numbers it
	linkTypeRawBSD wire.LinkType = 14  // DLT_RAW on some BSDs
	linkTypeSLL2   wire.LinkType = 276 // LINKTYPE_LINUX_SLL2
)

// EtherTypes we follow.
const (
	etherIPv4      = 0x0800
	etherIPv6      = 0x86DD
	etherVLAN      = 0x8100
	etherQinQ      = 0x88A8
	etherQinQOld   = 0x9100
	etherPPPoESess = 0x8864
	etherMPLS      = 0x8847
	etherMPLSMulti = 0x8848
)

// PPP protocol numbers.
const (
	pppIPv4 = 0x0021
	pppIPv6 = 0x0057
)

// Header sizes.
const (
	ethHeader   = 14
	vlanTag     = 4
	sllHeader   = 16
	sll2Header  = 20
	pppoeHeader = 6
	nullHeader  = 4
)

// BSD loopback address families for IPv6 differ by OS (NetBSD/OpenBSD 24,
// FreeBSD 28, Darwin 30); IPv4 is 2 everywhere.
func nullFamily(f uint32) uint16 {
	switch f {
	case 2:
		return etherIPv4
	case 24, 28, 30:
		return etherIPv6
	}
	return 0
}

// linkNames are the names Stats.LinkSeen counts frames by, bounded
// although the link type comes from the file: linkIndex maps a type to
// its name's index, so counting a frame is an array increment, not a map
// update.
var linkNames = [...]string{"ethernet", "linux_sll", "linux_sll2", "raw", "ipv4", "ipv6", "null", "loop", "ppp", "other"}

func linkIndex(l wire.LinkType) int {
	switch l {
	case wire.LinkEthernet:
		return 0
	case wire.LinkLinuxSLL:
		return 1
	case linkTypeSLL2:
		return 2
	case wire.LinkRaw, linkTypeRawAlt, linkTypeRawBSD:
		return 3
	case wire.LinkIPv4:
		return 4
	case wire.LinkIPv6:
		return 5
	case wire.LinkNull:
		return 6
	case wire.LinkLoop:
		return 7
	case wire.LinkPPP:
		return 8
	}
	return len(linkNames) - 1
}

func (d *Decoder) link(link wire.LinkType, b []byte) {
	switch link {
	case wire.LinkEthernet:
		d.ether(b, 0)
	case wire.LinkLinuxSLL:
		if len(b) < sllHeader {
			d.c.skip(SkipTruncated)
			return
		}
		d.etherType(binary.BigEndian.Uint16(b[14:]), b[sllHeader:], 0)
	case linkTypeSLL2:
		if len(b) < sll2Header {
			d.c.skip(SkipTruncated)
			return
		}
		d.etherType(binary.BigEndian.Uint16(b[0:]), b[sll2Header:], 0)
	case wire.LinkRaw, linkTypeRawAlt, linkTypeRawBSD, wire.LinkIPv4, wire.LinkIPv6:
		d.ip(b, 0)
	case wire.LinkNull, wire.LinkLoop:
		if len(b) < nullHeader {
			d.c.skip(SkipTruncated)
			return
		}
		// DLT_NULL is in the capturing host's byte order: try both.
		f := nullFamily(binary.BigEndian.Uint32(b))
		if f == 0 && link == wire.LinkNull {
			f = nullFamily(binary.LittleEndian.Uint32(b))
		}
		if f == 0 {
			d.c.skip(SkipNotIP)
			return
		}
		d.etherType(f, b[nullHeader:], 0)
	case wire.LinkPPP:
		// Optional HDLC address/control bytes 0xFF 0x03.
		if len(b) >= 2 && b[0] == 0xFF && b[1] == 0x03 {
			b = b[2:]
		}
		d.ppp(b, 0)
	default:
		d.c.skip(SkipLinkType)
	}
}

// ether reads an Ethernet frame: the capture's own, or one a tunnel
// carries at depth.
func (d *Decoder) ether(b []byte, depth int) {
	if len(b) < ethHeader {
		d.c.skip(SkipTruncated)
		return
	}
	d.etherType(binary.BigEndian.Uint16(b[12:]), b[ethHeader:], depth)
}

// etherType follows an EtherType; depth counts encapsulations so far.
func (d *Decoder) etherType(et uint16, b []byte, depth int) {
	if depth > maxEncapsulation {
		d.c.skip(SkipTooDeep)
		return
	}
	switch et {
	case etherIPv4, etherIPv6:
		d.ip(b, depth)
	case etherVLAN, etherQinQ, etherQinQOld:
		if len(b) < vlanTag {
			d.c.skip(SkipTruncated)
			return
		}
		d.etherType(binary.BigEndian.Uint16(b[2:]), b[vlanTag:], depth+1)
	case etherPPPoESess:
		if len(b) < pppoeHeader {
			d.c.skip(SkipTruncated)
			return
		}
		n := int(binary.BigEndian.Uint16(b[4:]))
		b = b[pppoeHeader:]
		if n < len(b) { // Ethernet padding follows the PPPoE payload
			b = b[:n]
		}
		d.ppp(b, depth+1)
	case etherMPLS, etherMPLSMulti:
		d.mpls(b, depth)
	default:
		d.c.skip(SkipNotIP)
	}
}

func (d *Decoder) ppp(b []byte, depth int) {
	if len(b) < 2 {
		d.c.skip(SkipTruncated)
		return
	}
	switch binary.BigEndian.Uint16(b) {
	case pppIPv4, pppIPv6:
		d.ip(b[2:], depth)
	default:
		d.c.skip(SkipNotIP)
	}
}
