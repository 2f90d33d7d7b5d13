package socketcan

import (
	"encoding/binary"
	"errors"
)

// rawFrameSize is struct can_frame: can_id (host order), len, 3 pad bytes,
// 8 data bytes. CAN FD frames (72 bytes) are not enabled on the socket.
const rawFrameSize = 16

// maxData is classic CAN's payload limit.
const maxData = 8

// errShortRead and errLength name the two ways a read is not a frame.
var (
	errShortRead = errors.New("socketcan: read is not one struct can_frame")
	errLength    = errors.New("socketcan: can_frame length over 8")
)

// decodeRaw splits one struct can_frame in host byte order into its can_id
// (flags included) and data, which aliases b.
func decodeRaw(b []byte) (id uint32, data []byte, err error) {
	if len(b) != rawFrameSize {
		return 0, nil, errShortRead
	}
	n := int(b[4])
	if n > maxData {
		return 0, nil, errLength
	}
	return binary.NativeEndian.Uint32(b[:4]), b[8 : 8+n], nil
}
