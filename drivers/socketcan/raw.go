package socketcan

import (
	"encoding/binary"
	"errors"

	"fieldtap/drivers/wire"
)

// rawFrameSize is struct can_frame (CAN_MTU): can_id (host order), len,
// 3 pad bytes, 8 data bytes. rawFDFrameSize is struct canfd_frame
// (CANFD_MTU): can_id, len, flags, 2 reserved bytes, 64 data bytes. With
// CAN_RAW_FD_FRAMES on, a socket reads each frame in its own size.
const (
	rawFrameSize   = 16
	rawFDFrameSize = wire.CANFDFrameBytes
)

// maxData is classic CAN's payload limit.
const maxData = 8

// errShortRead and errLength name the ways a read is not a frame.
var (
	errShortRead = errors.New("socketcan: read is not one struct can_frame or canfd_frame")
	errLength    = errors.New("socketcan: can_frame length over 8")
	errFDLength  = errors.New("socketcan: canfd_frame length over 64")
)

// decodeRaw splits one struct can_frame or canfd_frame in host byte
// order into its can_id (flags included), the FD flags (0 for a classic
// frame; wire.CANFDFDF with BRS and ESI for an FD one, whatever the
// kernel set of FDF itself) and data, which aliases b.
func decodeRaw(b []byte) (id uint32, flags uint8, data []byte, err error) {
	if len(b) != rawFrameSize && len(b) != rawFDFrameSize {
		return 0, 0, nil, errShortRead
	}
	n := int(b[4])
	switch {
	case len(b) == rawFrameSize:
		if n > maxData {
			return 0, 0, nil, errLength
		}
	default:
		if n > wire.MaxCANFDData {
			return 0, 0, nil, errFDLength
		}
		flags = b[5]&(wire.CANFDBRS|wire.CANFDESI) | wire.CANFDFDF
	}
	return binary.NativeEndian.Uint32(b[:4]), flags, b[8 : 8+n], nil
}
