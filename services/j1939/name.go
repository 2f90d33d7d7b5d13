package j1939

import "encoding/binary"

// Name is a decoded 64-bit J1939 NAME (J1939-81 §4.1.1), sent little-endian
// in the Address Claimed message.
type Name struct {
	Raw                 uint64
	Hex                 string // as sent, byte 0 first, like candump shows it
	IdentityNumber      uint32
	ManufacturerCode    uint16
	ECUInstance         uint8
	FunctionInstance    uint8
	Function            uint8
	VehicleSystem       uint8
	VehicleSystemInst   uint8
	IndustryGroup       uint8
	ArbitraryAddressCap bool
}

// ParseName decodes an 8-byte NAME; ok is false when b is shorter.
func ParseName(b []byte) (Name, bool) {
	if len(b) < 8 {
		return Name{}, false
	}
	v := binary.LittleEndian.Uint64(b)
	const hexDigits = "0123456789ABCDEF"
	var h [16]byte
	for i := range 8 {
		h[2*i], h[2*i+1] = hexDigits[b[i]>>4], hexDigits[b[i]&0xF]
	}
	return Name{
		Raw:                 v,
		Hex:                 string(h[:]),
		IdentityNumber:      uint32(v & 0x1FFFFF),
		ManufacturerCode:    uint16(v >> 21 & 0x7FF),
		ECUInstance:         uint8(v >> 32 & 0x7),
		FunctionInstance:    uint8(v >> 35 & 0x1F),
		Function:            uint8(v >> 40),
		VehicleSystem:       uint8(v >> 49 & 0x7F),
		VehicleSystemInst:   uint8(v >> 56 & 0xF),
		IndustryGroup:       uint8(v >> 60 & 0x7),
		ArbitraryAddressCap: v>>63 != 0,
	}, true
}
