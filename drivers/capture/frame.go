package capture

import (
	"time"

	"fieldtap/drivers/wire"
)

// Frame is one captured unit (an Ethernet frame, a CAN frame, a J1708
// message) with the time the driver saw it. Data is owned by whoever holds
// the Frame: a driver must not reuse it after emitting.
type Frame struct {
	Time time.Time
	Link wire.LinkType // wire.LinkCANSocketCAN, wire.LinkJ1708, or a pcap link type such as wire.LinkEthernet
	Data []byte
	// OrigLen is the length on the wire; larger than len(Data) when the
	// driver's snap length cut the frame.
	OrigLen int
}
