package wire

// LinkType is a pcap LINKTYPE_ value: what the bytes of a frame begin
// with. It is defined here, not taken from a packet library, so that the
// daemon links no library's tables of every protocol for the handful of
// numbers it needs.
type LinkType uint16

// Link types of captured network frames, from the pcap LINKTYPE registry.
const (
	LinkNull     LinkType = 0   // BSD loopback, host-order address family
	LinkEthernet LinkType = 1   // Ethernet II / 802.3
	LinkPPP      LinkType = 9   // PPP, HDLC-like framing
	LinkRaw      LinkType = 101 // raw IPv4 or IPv6, version nibble decides
	LinkLoop     LinkType = 108 // OpenBSD loopback, network-order family
	LinkLinuxSLL LinkType = 113 // Linux cooked capture v1
	LinkIPv4     LinkType = 228 // raw IPv4
	LinkIPv6     LinkType = 229 // raw IPv6
)

// Link types fieldtap stores frames under, from the pcap LINKTYPE
// registry. They are untyped so they compare with a LinkType as they do
// with the plain numbers of the capture file formats.
const (
	// LinkCANSocketCAN carries a Linux struct can_frame: 4-byte big-endian
	// id with the EFF/RTR/ERR flags in the top bits, DLC, 3 pad bytes, data.
	LinkCANSocketCAN = 227
	// LinkJ1708 carries one J1708 message (MID, data, checksum). The
	// registry has no J1708 type, so it takes LINKTYPE_USER0.
	LinkJ1708 = 147
	// LinkJ2497 marks a J2497 (PLC4TRUCKS) message: the J1708 layout on
	// the trailer power line, LINKTYPE_USER1.
	LinkJ2497 = 148
)
