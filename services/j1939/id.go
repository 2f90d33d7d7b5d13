package j1939

import "fieldtap/drivers/wire"

// Well-known PGNs (SAE J1939-21/-71/-73; names as published in public
// J1939 summaries such as CSS Electronics' J1939 DBC demo).
const (
	PGNRequest      = 59904 // 0xEA00
	PGNAddressClaim = 60928 // 0xEE00
	PGNTPCM         = 60416 // 0xEC00
	PGNTPDT         = 60160 // 0xEB00
	PGNDM1          = 65226 // 0xFECA active DTCs
	PGNDM2          = 65227 // 0xFECB previously active DTCs
	PGNVIN          = 65260 // 0xFEEC vehicle identification
	PGNComponentID  = 65259 // 0xFEEB
	PGNSoftwareID   = 65242 // 0xFEDA
	PGNEEC1         = 61444 // 0xF004
	PGNCCVS1        = 65265 // 0xFEF1
	PGNET1          = 65262 // 0xFEEE
)

// AddrGlobal is the destination of a broadcast (J1939-21 §5.2); AddrNull
// is the source of a "cannot claim" message.
const (
	AddrGlobal = 0xFF
	AddrNull   = 0xFE
)

// pdu2Min is the first PF of the PDU2 (broadcast, group extension) range.
const pdu2Min = 240

// ID is a decoded 29-bit J1939 identifier.
type ID struct {
	Priority uint8
	EDP      uint8
	DP       uint8
	PF       uint8
	PS       uint8
	PGN      uint32
	SA       uint8
	// DA is PS for PDU1 (PF < 240) and AddrGlobal for PDU2.
	DA uint8
}

// ParseID splits a 29-bit identifier (flag bits above bit 28 ignored).
// For PDU1 the PGN's low byte is zero and PS is the destination; for PDU2
// PS is the group extension and part of the PGN.
func ParseID(id uint32) ID {
	var x ID
	parseIDInto(id, &x)
	return x
}

// parseIDInto is ParseID writing every field of *x in place, for the
// decoder's per-frame message (Decoder.Feed says why).
func parseIDInto(id uint32, x *ID) {
	id &= wire.CANEFFMask
	x.Priority, x.EDP, x.DP = uint8(id>>26&7), uint8(id>>25&1), uint8(id>>24&1)
	x.PF, x.PS, x.SA = uint8(id>>16), uint8(id>>8), uint8(id)
	// The EDP bit joins DP as a 2-bit data page, as in GROUND_TRUTH's PGN.
	page := uint32(x.EDP)<<1 | uint32(x.DP)
	if x.PF < pdu2Min {
		x.PGN = page<<16 | uint32(x.PF)<<8
		x.DA = x.PS
	} else {
		x.PGN = page<<16 | uint32(x.PF)<<8 | uint32(x.PS)
		x.DA = AddrGlobal
	}
}

// pgnNames names common PGNs. A constant table, never written after init.
var pgnNames = map[uint32]string{
	0:               "TSC1 torque/speed control 1",
	256:             "TC1 transmission control 1",
	PGNTPDT:         "TP.DT transport data",
	PGNTPCM:         "TP.CM transport connection management",
	PGNRequest:      "Request",
	PGNAddressClaim: "Address Claimed",
	59392:           "Acknowledgment",
	61440:           "ERC1 electronic retarder controller 1",
	61441:           "EBC1 electronic brake controller 1",
	61442:           "ETC1 electronic transmission controller 1",
	61443:           "EEC2 electronic engine controller 2",
	PGNEEC1:         "EEC1 electronic engine controller 1",
	61445:           "ETC2 electronic transmission controller 2",
	61450:           "EGF1 engine gas flow rate",
	61454:           "AT1IG1 aftertreatment 1 intake gas 1",
	61455:           "AT1OG1 aftertreatment 1 outlet gas 1",
	64965:           "ECUID ECU identification",
	PGNSoftwareID:   "SOFT software identification",
	65247:           "EEC3 electronic engine controller 3",
	65248:           "VD vehicle distance",
	65249:           "RC retarder configuration",
	65251:           "EC1 engine configuration 1",
	65253:           "HOURS engine hours, revolutions",
	65254:           "TD time/date",
	65257:           "LFC fuel consumption (liquid)",
	PGNComponentID:  "CI component identification",
	PGNVIN:          "VI vehicle identification",
	65261:           "CCSS cruise control/vehicle speed setup",
	PGNET1:          "ET1 engine temperature 1",
	65263:           "EFL/P1 engine fluid level/pressure 1",
	65264:           "PTO power takeoff information",
	PGNCCVS1:        "CCVS1 cruise control/vehicle speed 1",
	65266:           "LFE1 fuel economy (liquid)",
	65269:           "AMB ambient conditions",
	65270:           "IC1 inlet/exhaust conditions 1",
	65271:           "VEP1 vehicle electrical power 1",
	65272:           "TRF1 transmission fluids 1",
	65276:           "DD dash display",
	PGNDM1:          "DM1 active diagnostic trouble codes",
	PGNDM2:          "DM2 previously active diagnostic trouble codes",
	65134:           "HRW high resolution wheel speed",
	65215:           "EBC2 wheel speed information",
}

// PGNName returns a short name for pgn, or "" when it is not in the table.
func PGNName(pgn uint32) string { return pgnNames[pgn] }
