package wire

// Link types fieldtap stores frames under, from the pcap LINKTYPE
// registry. They are untyped so they compare with gopacket's
// layers.LinkType without this package importing gopacket.
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
