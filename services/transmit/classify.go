package transmit

import (
	"fieldtap/drivers/wire"
	"fieldtap/services/isotp"
	"fieldtap/services/j1939"
)

// J1939 diagnostic messages that clear stored information (J1939-73).
const (
	PGNDM3    = 65228 // clear previously active DTCs
	PGNDM11   = 65235 // clear active DTCs
	pfRequest = 0xEA

	pfDiagPhysical   = 0xDA // ISO 15765-4 29-bit physical addressing
	pfDiagFunctional = 0xDB // ISO 15765-4 29-bit functional addressing
)

// classify derives a CAN plan's risk from its frames alone, so the same
// frames get the same class from every tool: a J1939 Request is read
// whether j1939_request or a raw can_send made it, a DM11 request or a
// UDS ClearDiagnosticInformation is an erase whatever tool made it. A
// frame the box cannot name is actuate: arbitrary bytes can command
// anything. Other media are not decoded and stay actuate.
func classify(sp *Spec) Risk {
	if sp.Medium != MediumCAN {
		return RiskActuate
	}
	risk := RiskRead
	for i, f := range sp.Frames {
		r := classifyCAN(f)
		// A segmented request's consecutive frames carry the service of
		// its first frame, classified already.
		if r == "" && f.OnFlowControl && i > 0 {
			continue
		}
		if r == "" {
			r = RiskActuate
		}
		if r.rank() > risk.rank() {
			risk = r
		}
	}
	return risk
}

// classifyCAN names what one frame asks for, or "" when it is not a
// request the box recognises. Data bytes alone prove nothing (01 02 03
// reads as an ISO-TP single frame), so a diagnostic request counts only
// on the identifiers diagnostics use: 11-bit 0x700-0x7FF (OBD-II's
// 0x7DF/0x7E0-0x7E7 and the OEM testers beside them) and ISO 15765-4's
// 29-bit physical (PF 0xDA) and functional (PF 0xDB) ids.
func classifyCAN(f Frame) Risk {
	if f.ID&wire.CANEFF != 0 {
		switch j1939.ParseID(f.ID).PF {
		case pfRequest:
			pgn, ok := j1939.ParseRequest(f.Data)
			if !ok {
				return ""
			}
			if pgn == PGNDM3 || pgn == PGNDM11 {
				return RiskErase
			}
			return RiskRead
		case pfDiagPhysical, pfDiagFunctional:
			return diagnosticRisk(f.Data)
		}
		return ""
	}
	if id := f.ID & wire.CANSFFMask; id >= 0x700 && id <= 0x7FF {
		return diagnosticRisk(f.Data)
	}
	return ""
}

// diagnosticRisk classes a request in an ISO-TP single or first frame.
func diagnosticRisk(data []byte) Risk {
	fr, err := isotp.Parse(data)
	if err != nil || (fr.Type != isotp.TypeSingle && fr.Type != isotp.TypeFirst) || len(fr.Data) == 0 {
		return ""
	}
	return serviceRisk(fr.Data[0])
}

// serviceRisk classes a diagnostic service id: the services that only
// report are read, the clears are erase, every other service (sessions,
// resets, security access, writes, I/O and routine control, downloads,
// and ids the box does not know) is actuate.
func serviceRisk(sid byte) Risk {
	switch sid {
	case isotp.SIDClearDTC, 0x04: // UDS/KWP ClearDiagnosticInformation, OBD-II mode 04
		return RiskErase
	case 0x01, 0x02, 0x03, 0x06, 0x07, 0x09, 0x0A, // OBD-II reads
		0x17, 0x18, 0x1A, 0x21, // KWP reads
		isotp.SIDReadDTC, isotp.SIDReadDataByID, 0x23, 0x24, isotp.SIDTesterPresent:
		return RiskRead
	}
	return RiskActuate
}
