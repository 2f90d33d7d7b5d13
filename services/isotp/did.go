package isotp

import "fmt"

// What a message's identifier is (DIDKind), by service.
const (
	KindDID        = "DID"
	KindRoutine    = "routine"
	KindLocal      = "local identifier"
	KindPID        = "PID"
	KindReportType = "report type" // ReadDTCInformation's sub-function
	KindDTCGroup   = "DTC group"   // ClearDiagnosticInformation's groupOfDTC
)

// MaxDIDs bounds the DIDs kept from one ReadDataByIdentifier request:
// ISO 14229-1 lets a request name up to 2 047 of them, testers name a
// handful, and every one kept is held in the store. The rest are counted
// (Identified.Dropped).
const MaxDIDs = 16

// Identified is the identifier a UDS, KWP2000 or OBD-II message addresses,
// read from its reassembled payload (ISO 14229-1 layouts).
type Identified struct {
	Kind   string   // one of the Kind constants; "" when the service has none
	Values []uint32 // at most MaxDIDs
	// Digits is the hex width of a value: 4 for a DID or routine, 2 for a
	// report type, local identifier or PID, 6 for a DTC group.
	Digits  int
	Dropped int // values past MaxDIDs
}

// Hex writes v as the identifier is written everywhere: "0xF190".
func (id Identified) Hex(v uint32) string { return fmt.Sprintf("0x%0*X", id.Digits, v) }

// Identify reads the identifier of a request or a positive answer:
//
//   - 0x22 ReadDataByIdentifier: every DID of the request; its answer's
//     first DID only (the data records' lengths are the ECU's, not the
//     standard's);
//   - 0x2E WriteDataByIdentifier, 0x24 ReadScalingDataByIdentifier, 0x2F
//     InputOutputControlByIdentifier and their answers: the DID;
//   - 0x31 RoutineControl and its answer: the routine id after the
//     sub-function;
//   - 0x19 ReadDTCInformation and its answer: the sub-function (report
//     type); 0x14 ClearDiagnosticInformation: the 3-byte DTC group (its
//     answer carries none);
//   - KWP2000 local identifier services (0x1A, 0x21, 0x30, 0x3B) and
//     OBD-II modes 01, 02, 09 and their answers: the first byte.
//
// A negative answer, a service without an identifier or a message too
// short for one gives a zero Identified.
func Identify(pdu []byte) Identified {
	if len(pdu) < 2 || pdu[0] == SIDNegative {
		return Identified{}
	}
	sid, answer := pdu[0], pdu[0]&positiveBit != 0
	if answer {
		sid -= positiveOffset
	}
	rest := pdu[1:]
	switch sid {
	case SIDReadDataByID:
		if answer {
			return fixed(KindDID, rest, 2)
		}
		id := Identified{Kind: KindDID, Digits: 4}
		for ; len(rest) >= 2; rest = rest[2:] {
			if len(id.Values) == MaxDIDs {
				id.Dropped++
				continue
			}
			id.Values = append(id.Values, uint32(rest[0])<<8|uint32(rest[1]))
		}
		if id.Values == nil {
			return Identified{}
		}
		return id
	case SIDWriteDataByID, sidReadScaling, sidIOControl:
		return fixed(KindDID, rest, 2)
	case SIDRoutineControl:
		return fixed(KindRoutine, rest[1:], 2)
	case SIDReadDTC:
		id := fixed(KindReportType, rest, 1)
		id.Values[0] &^= suppressPositiveReply
		return id
	case SIDClearDTC:
		if answer {
			return Identified{}
		}
		return fixed(KindDTCGroup, rest, 3)
	}
	switch info, _ := Service(sid); info.Identifier {
	case idLocal:
		return fixed(KindLocal, rest, 1)
	case idPID:
		return fixed(KindPID, rest, 1)
	}
	return Identified{}
}

// fixed reads one big-endian identifier of n bytes at the start of b.
func fixed(kind string, b []byte, n int) Identified {
	if len(b) < n {
		return Identified{}
	}
	var v uint32
	for _, c := range b[:n] {
		v = v<<8 | uint32(c)
	}
	return Identified{Kind: kind, Values: []uint32{v}, Digits: 2 * n}
}
