package netdecode

import "encoding/binary"

// Tunnels the decoder opens (remote SPAN): the header layouts are RFC 2784
// and RFC 2890 (GRE with checksum, key and sequence number), RFC 7348
// (VXLAN), RFC 3032 (MPLS label stack entries), RFC 4385 (the pseudowire
// control word before an Ethernet payload) and draft-foschiano-erspan-03
// (ERSPAN types I, II and III).
const (
	greHeader     = 4
	greChecksum   = 0x80 // C: checksum and reserved1 follow (4 bytes)
	greRouting    = 0x40 // R (RFC 1701): source routes follow, not opened
	greKey        = 0x20 // K: a 4-byte key follows
	greSeq        = 0x10 // S: a 4-byte sequence number follows
	greVersion    = 0x07 // low bits of the second byte; 1 is PPTP's enhanced GRE
	etherTEB      = 0x6558
	etherERSPAN   = 0x88BE // type II, or type I when GRE carries no sequence number
	etherERSPAN3  = 0x22EB
	erspan2Header = 8
	erspan3Header = 12
	erspan3Sub    = 8 // the platform-specific subheader, when the O bit is set
	vxlanHeader   = 8
	mplsEntry     = 4
	pwControlWord = 4
	// DefaultVXLANPort is VXLAN's IANA port (RFC 7348).
	DefaultVXLANPort = 4789
	// MaxVXLANPorts bounds Options.VXLANPorts: each is compared with every
	// UDP datagram's destination port, so the list stays short (the IANA
	// port and Linux's historical 8472 are the ones met in practice).
	MaxVXLANPorts = 4
)

// Tunnel kinds, as Stats.Tunnels counts the headers opened.
const (
	TunnelGRE       = "gre"
	TunnelERSPAN1   = "erspan_i"
	TunnelERSPAN2   = "erspan_ii"
	TunnelERSPAN3   = "erspan_iii"
	TunnelVXLAN     = "vxlan"
	TunnelMPLS      = "mpls"
	tunnelKindCount = 6
)

// tunnelNames are Stats.Tunnels' keys by index, so counting a header is
// an array increment.
var tunnelNames = [tunnelKindCount]string{TunnelGRE, TunnelERSPAN1, TunnelERSPAN2, TunnelERSPAN3, TunnelVXLAN, TunnelMPLS}

const (
	kindGRE = iota
	kindERSPAN1
	kindERSPAN2
	kindERSPAN3
	kindVXLAN
	kindMPLS
)

// gre opens a GRE header (IPv4 or IPv6 protocol 47). What it carries and
// the decoder does not follow (PPTP's version 1, RFC 1701 routing, another
// protocol) is counted as a tunnel not decoded.
func (d *Decoder) gre(b []byte, depth int) {
	if len(b) < greHeader {
		d.c.skip(SkipTruncated)
		return
	}
	flags := b[0]
	if flags&greRouting != 0 || b[1]&greVersion != 0 {
		d.c.skip(SkipTunnel)
		return
	}
	n := greHeader
	for _, f := range [...]byte{greChecksum, greKey, greSeq} {
		if flags&f != 0 {
			n += 4
		}
	}
	if len(b) < n {
		d.c.skip(SkipTruncated)
		return
	}
	proto, b := binary.BigEndian.Uint16(b[2:]), b[n:]
	switch proto {
	case etherTEB:
		d.c.tunnel(kindGRE)
		d.ether(b, depth+1)
	case etherIPv4, etherIPv6:
		d.c.tunnel(kindGRE)
		d.ip(b, depth+1)
	case etherMPLS, etherMPLSMulti:
		d.c.tunnel(kindGRE)
		d.mpls(b, depth+1)
	case etherERSPAN:
		if flags&greSeq == 0 { // type I: the mirrored frame follows GRE
			d.c.tunnel(kindERSPAN1)
			d.ether(b, depth+1)
			return
		}
		if len(b) < erspan2Header {
			d.c.skip(SkipTruncated)
			return
		}
		if b[0]>>4 != 1 {
			d.c.skip(SkipTunnel)
			return
		}
		d.c.tunnel(kindERSPAN2)
		d.ether(b[erspan2Header:], depth+1)
	case etherERSPAN3:
		d.erspan3(b, depth)
	default:
		d.c.skip(SkipTunnel)
	}
}

// erspan3 opens an ERSPAN type III header: its frame type says whether an
// Ethernet frame (0) or an IP packet (2) follows.
func (d *Decoder) erspan3(b []byte, depth int) {
	if len(b) < erspan3Header {
		d.c.skip(SkipTruncated)
		return
	}
	if b[0]>>4 != 2 {
		d.c.skip(SkipTunnel)
		return
	}
	n := erspan3Header
	if b[11]&1 != 0 { // O: a platform-specific subheader follows
		n += erspan3Sub
	}
	if len(b) < n {
		d.c.skip(SkipTruncated)
		return
	}
	switch (b[10] >> 2) & 0x1F {
	case 0:
		d.c.tunnel(kindERSPAN3)
		d.ether(b[n:], depth+1)
	case 2:
		d.c.tunnel(kindERSPAN3)
		d.ip(b[n:], depth+1)
	default:
		d.c.skip(SkipTunnel)
	}
}

// vxlan opens a VXLAN header on one of Options.VXLANPorts: an Ethernet
// frame follows.
func (d *Decoder) vxlan(b []byte, depth int) {
	if len(b) < vxlanHeader {
		d.c.skip(SkipTruncated)
		return
	}
	d.c.tunnel(kindVXLAN)
	d.ether(b[vxlanHeader:], depth+1)
}

// mpls pops a label stack (each entry one encapsulation) and reads what
// follows the bottom of the stack by its first nibble, as routers and
// tshark do: 4 and 6 are IP, 0 is a pseudowire control word before an
// Ethernet frame. Anything else is counted as a tunnel not decoded.
func (d *Decoder) mpls(b []byte, depth int) {
	for {
		if depth > maxEncapsulation {
			d.c.skip(SkipTooDeep)
			return
		}
		if len(b) < mplsEntry {
			d.c.skip(SkipTruncated)
			return
		}
		bottom := b[2]&1 != 0
		b, depth = b[mplsEntry:], depth+1
		if bottom {
			break
		}
	}
	if len(b) < 1 {
		d.c.skip(SkipTruncated)
		return
	}
	switch b[0] >> 4 {
	case 4, 6:
		d.c.tunnel(kindMPLS)
		d.ip(b, depth)
	case 0:
		if len(b) < pwControlWord {
			d.c.skip(SkipTruncated)
			return
		}
		d.c.tunnel(kindMPLS)
		d.ether(b[pwControlWord:], depth)
	default:
		d.c.skip(SkipTunnel)
	}
}
