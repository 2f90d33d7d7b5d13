package wire

import (
	"encoding/binary"
	"errors"

	"go.einride.tech/can"
)

// SocketCAN can_id flag bits and masks (include/uapi/linux/can.h). The
// masks are einride's: the largest 11-bit and 29-bit identifiers.
const (
	CANEFF = 0x80000000 // CAN_EFF_FLAG: extended frame format (29-bit id)
	CANRTR = 0x40000000 // CAN_RTR_FLAG: remote transmission request
	CANERR = 0x20000000 // CAN_ERR_FLAG: error frame

	CANSFFMask = can.MaxID         // CAN_SFF_MASK: an 11-bit id
	CANEFFMask = can.MaxExtendedID // CAN_EFF_MASK: a 29-bit id
	// CANErrMask is CAN_ERR_MASK: an error frame's class bits, which
	// share the 29 id bits.
	CANErrMask = can.MaxExtendedID
	// CANFlags is every flag bit; an id with other bits above 29 is
	// malformed.
	CANFlags = CANEFF | CANRTR | CANERR
)

// MaxCANData is the classic CAN payload limit; CAN FD is not carried.
const MaxCANData = 8

// canHeader is the struct can_frame header before the data bytes.
const canHeader = 8

// CANID is the identifier without flag bits: 29 bits for an extended
// frame, 11 for a standard one.
func CANID(id uint32) uint32 {
	if id&CANEFF != 0 {
		return id & CANEFFMask
	}
	return id & CANSFFMask
}

// EncodeCAN lays a classic CAN frame out as LINKTYPE_CAN_SOCKETCAN bytes
// (id big-endian, DLC, three pad bytes, data). id carries the flag bits.
func EncodeCAN(id uint32, data []byte) ([]byte, error) {
	return AppendCAN(make([]byte, 0, canHeader+len(data)), id, data)
}

// AppendCAN is EncodeCAN appending to dst, so a reader can lay many
// frames out in one buffer.
func AppendCAN(dst []byte, id uint32, data []byte) ([]byte, error) {
	if len(data) > MaxCANData {
		return dst, errors.New("wire: classic CAN data longer than 8 bytes")
	}
	dst = binary.BigEndian.AppendUint32(dst, id)
	dst = append(dst, byte(len(data)), 0, 0, 0)
	return append(dst, data...), nil
}

// CANFrameBytes is the most bytes one classic frame takes encoded.
const CANFrameBytes = canHeader + MaxCANData

// DecodeCAN splits LINKTYPE_CAN_SOCKETCAN bytes into id (with flag bits)
// and data, which aliases b.
func DecodeCAN(b []byte) (id uint32, data []byte, err error) {
	if len(b) < canHeader {
		return 0, nil, errors.New("wire: CAN frame shorter than its header")
	}
	n := int(b[4])
	if n > MaxCANData || canHeader+n > len(b) {
		return 0, nil, errors.New("wire: CAN frame length byte exceeds its data")
	}
	return binary.BigEndian.Uint32(b), b[canHeader : canHeader+n], nil
}

// FormatCANID is the one hex spelling of an id, as candump writes it:
// upper case, 8 digits for an extended id or an error frame's class bits,
// 3 for a standard id, flag bits left out.
func FormatCANID(id uint32) string {
	var b [8]byte
	digits := 3
	v := id & CANSFFMask
	if id&(CANEFF|CANERR) != 0 {
		digits, v = 8, id&CANEFFMask
	}
	return string(appendHex(b[:0], uint64(v), digits))
}
