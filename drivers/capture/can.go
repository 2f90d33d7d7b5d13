package capture

import (
	"encoding/binary"
	"errors"
)

// SocketCAN can_id flag bits (include/uapi/linux/can.h).
const (
	CANEFF = 0x80000000 // extended frame format (29-bit id)
	CANRTR = 0x40000000 // remote transmission request
	CANERR = 0x20000000 // error frame
)

// canHeader is the struct can_frame header before the data bytes.
const canHeader = 8

// EncodeCAN lays a classic CAN frame out as LinkCANSocketCAN bytes. id
// carries the flag bits above; data is at most 8 bytes.
func EncodeCAN(id uint32, data []byte) ([]byte, error) {
	if len(data) > 8 {
		return nil, errors.New("capture: classic CAN data longer than 8 bytes")
	}
	b := make([]byte, canHeader+len(data))
	binary.BigEndian.PutUint32(b, id)
	b[4] = byte(len(data))
	copy(b[canHeader:], data)
	return b, nil
}

// DecodeCAN splits LinkCANSocketCAN bytes into id (with flag bits) and data,
// which aliases b.
func DecodeCAN(b []byte) (id uint32, data []byte, err error) {
	if len(b) < canHeader {
		return 0, nil, errors.New("capture: CAN frame shorter than its header")
	}
	n := int(b[4])
	if n > 8 || canHeader+n > len(b) {
		return 0, nil, errors.New("capture: CAN frame length byte exceeds its data")
	}
	return binary.BigEndian.Uint32(b), b[canHeader : canHeader+n], nil
}
