package j1939gen

// Source addresses (J1939 Appendix B, preferred addresses).
const (
	EngineAddress       = 0x00
	TransmissionAddress = 0x03
	BrakesAddress       = 0x0B
	BodyAddress         = 0x21 // body controller
	globalAddress       = 0xFF
)

// Parameter group numbers used here (J1939-71, -73, -21, -81).
const (
	pgnEBC1         = 61441 // electronic brake controller 1
	pgnETC1         = 61442 // electronic transmission controller 1
	pgnEEC1         = 61444 // electronic engine controller 1
	pgnETC2         = 61445 // electronic transmission controller 2
	pgnTPDT         = 60160 // transport protocol, data transfer
	pgnTPCM         = 60416 // transport protocol, connection management
	pgnAddressClaim = 60928
	pgnDM1          = 65226 // active diagnostic trouble codes
	pgnVI           = 65260 // vehicle identification
	pgnET1          = 65262 // engine temperature 1
	pgnCCVS         = 65265 // cruise control / vehicle speed
	pgnAMB          = 65269 // ambient conditions
)

// Priorities: 3 for control messages, 6 for the rest, 7 for transport
// (J1939-21 defaults).
const (
	prioControl   = 3
	prioInfo      = 6
	prioTransport = 7
)

const (
	pduFormatSpecific = 240 // PF below this is PDU1: PS is a destination
	idPriorityShift   = 26  // priority sits in bits 28-26
)

// canID builds a 29-bit identifier. A PDU1 group (PF < 240) goes to dst;
// a PDU2 group carries its own group extension and dst is ignored.
func canID(prio uint32, pgn uint32, sa, dst byte) uint32 {
	if pgn>>8&0xFF < pduFormatSpecific {
		pgn = pgn&^0xFF | uint32(dst)
	}
	return prio<<idPriorityShift | pgn<<8 | uint32(sa)
}
