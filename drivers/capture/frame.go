package capture

import (
	"time"

	"github.com/gopacket/gopacket/layers"
)

// Link types not in gopacket's table, numbered from the pcap LINKTYPE registry.
const (
	// LinkCANSocketCAN carries a Linux struct can_frame: 4-byte big-endian
	// id with the EFF/RTR/ERR flags in the top bits, DLC, 3 pad bytes, data.
	LinkCANSocketCAN layers.LinkType = 227
	// LinkJ1708 carries one J1708 message (MID, data, checksum). The
	// registry has no J1708 type, so it takes LINKTYPE_USER0.
	LinkJ1708 layers.LinkType = 147
)

// Frame is one captured unit (an Ethernet frame, a CAN frame, a J1708
// message) with the time the driver saw it. Data is owned by whoever holds
// the Frame: a driver must not reuse it after emitting.
type Frame struct {
	Time time.Time
	Link layers.LinkType
	Data []byte
	// OrigLen is the length on the wire; larger than len(Data) when the
	// driver's snap length cut the frame.
	OrigLen int
}
