package obd

import "fieldtap/drivers/wire"

// ISO 15765-4 identifiers. 11-bit: 0x7DF asks every ECU, 0x7E0+n asks
// ECU n, which answers on 0x7E8+n. 29-bit (normal fixed addressing): the
// tester is 0xF1, 0x18DB33F1 asks every ECU, 0x18DA<ecu>F1 asks one,
// which answers on 0x18DAF1<ecu>.
const (
	FunctionalID11 = 0x7DF
	requestLow11   = 0x7E0
	responseLow11  = 0x7E8
	ecus11         = 8
	FunctionalID29 = 0x18DB33F1
	physical29     = 0x18DA0000
	testerAddress  = 0xF1
)

// IsRequestID reports whether id (wire.CANEFF set for 29 bits) is one a
// tester sends OBD requests on.
func IsRequestID(id uint32) bool {
	if id&wire.CANEFF == 0 {
		return id == FunctionalID11 || id >= requestLow11 && id < requestLow11+ecus11
	}
	id &= wire.CANEFFMask
	return id == FunctionalID29 || id&0xFFFF00FF == physical29|testerAddress
}

// IsResponseID reports whether id is one an ECU answers OBD requests on.
func IsResponseID(id uint32) bool {
	if id&wire.CANEFF == 0 {
		return id >= responseLow11 && id < responseLow11+ecus11
	}
	return id&wire.CANEFFMask&0xFFFFFF00 == physical29|testerAddress<<8
}
