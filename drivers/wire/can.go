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

// MaxCANData is the classic CAN payload limit.
const MaxCANData = 8

// CAN FD: struct canfd_frame's flags byte (include/uapi/linux/can.h), which
// LINKTYPE_CAN_SOCKETCAN keeps as byte 5 of a frame, and the FD payload
// limit. CANFDFDF marks the frame as CAN FD in a capture file; a Linux
// socket sets it on FD frames only from kernel 6.0, so a reader also takes
// a frame of CANFDFrameBytes (CANFD_MTU) as FD, as the linktype's
// specification says older captures are.
const (
	CANFDBRS = 0x01 // CANFD_BRS: bit rate switch (data phase at the data bitrate)
	CANFDESI = 0x02 // CANFD_ESI: error state indicator of the sender
	CANFDFDF = 0x04 // CANFD_FDF: this is a CAN FD frame

	MaxCANFDData = 64
	// CANFDFrameBytes is struct canfd_frame, CANFD_MTU.
	CANFDFrameBytes = canHeader + MaxCANFDData
)

// CANFDDLC is the DLC code an FD frame of n data bytes is sent with: the
// lengths 12 to 64 have codes 9 to 15, and a length between two of them
// is padded up to the next on the bus.
func CANFDDLC(n int) int {
	if n <= 8 {
		return n
	}
	for i, l := range fdLens {
		if n <= l {
			return 9 + i
		}
	}
	return 15
}

// CANFDPadded is the length an FD frame of n data bytes has on the bus:
// n up to 8, else the next of 12, 16, 20, 24, 32, 48 and 64.
func CANFDPadded(n int) int {
	if n <= 8 {
		return n
	}
	for _, l := range fdLens {
		if n <= l {
			return l
		}
	}
	return MaxCANFDData
}

var fdLens = [...]int{12, 16, 20, 24, 32, 48, 64}

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

// AppendCANFD appends a CAN FD frame as LINKTYPE_CAN_SOCKETCAN bytes:
// id big-endian, length, the flags byte with CANFDFDF set, two reserved
// bytes, data. Only CANFDBRS and CANFDESI of flags are kept. An FD frame
// has no remote form, so CANRTR is refused.
func AppendCANFD(dst []byte, id uint32, flags uint8, data []byte) ([]byte, error) {
	if len(data) > MaxCANFDData {
		return dst, errors.New("wire: CAN FD data longer than 64 bytes")
	}
	if id&CANRTR != 0 {
		return dst, errors.New("wire: CAN FD has no remote frames")
	}
	dst = binary.BigEndian.AppendUint32(dst, id)
	dst = append(dst, byte(len(data)), flags&(CANFDBRS|CANFDESI)|CANFDFDF, 0, 0)
	return append(dst, data...), nil
}

// AppendCANFrame is AppendCAN for a frame whose flags byte has CANFDFDF,
// and AppendCANFD otherwise: one call for either kind.
func AppendCANFrame(dst []byte, id uint32, flags uint8, data []byte) ([]byte, error) {
	if flags&CANFDFDF != 0 {
		return AppendCANFD(dst, id, flags, data)
	}
	return AppendCAN(dst, id, data)
}

// CANFrameBytes is the most bytes one classic frame takes encoded.
const CANFrameBytes = canHeader + MaxCANData

// DecodeCAN splits LINKTYPE_CAN_SOCKETCAN bytes, classic or FD, into id
// (with flag bits) and data, which aliases b.
func DecodeCAN(b []byte) (id uint32, data []byte, err error) {
	id, _, data, err = DecodeCANFD(b)
	return id, data, err
}

// DecodeCANFD is DecodeCAN that also returns the FD flags: 0 for a
// classic frame, CANFDFDF with CANFDBRS and CANFDESI as sent for an FD
// frame. A classic frame's byte 5 is padding, whatever it holds.
func DecodeCANFD(b []byte) (id uint32, flags uint8, data []byte, err error) {
	if len(b) < canHeader {
		return 0, 0, nil, errors.New("wire: CAN frame shorter than its header")
	}
	n, limit := int(b[4]), MaxCANData
	if b[5]&CANFDFDF != 0 || len(b) == CANFDFrameBytes {
		flags, limit = b[5]&(CANFDBRS|CANFDESI)|CANFDFDF, MaxCANFDData
	}
	if n > limit || canHeader+n > len(b) {
		return 0, 0, nil, errors.New("wire: CAN frame length byte exceeds its data")
	}
	return binary.BigEndian.Uint32(b), flags, b[canHeader : canHeader+n], nil
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
