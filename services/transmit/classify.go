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
)

// classify derives a risk from the bytes themselves, so a raw can_send of
// a DM11 request or a UDS ClearDiagnosticInformation is an erase whatever
// tool made it: gate on what the frames do, not on a tool's name. It only
// ever raises a planner's class; a misread data byte errs towards asking.
func classify(sp *Spec) Risk {
	risk := RiskRead
	for _, f := range sp.Frames {
		if sp.Medium != MediumCAN {
			return RiskActuate
		}
		if r := classifyCAN(f); r.rank() > risk.rank() {
			risk = r
		}
	}
	return risk
}

func classifyCAN(f Frame) Risk {
	if f.ID&wire.CANEFF != 0 {
		id := j1939.ParseID(f.ID)
		if id.PF == pfRequest {
			if pgn, ok := j1939.ParseRequest(f.Data); ok && (pgn == PGNDM3 || pgn == PGNDM11) {
				return RiskErase
			}
		}
	}
	// A UDS request in an ISO-TP single or first frame.
	fr, err := isotp.Parse(f.Data)
	if err != nil || (fr.Type != isotp.TypeSingle && fr.Type != isotp.TypeFirst) || len(fr.Data) == 0 {
		return RiskRead
	}
	switch fr.Data[0] {
	case isotp.SIDClearDTC:
		return RiskErase
	case isotp.SIDSessionControl, 0x11, 0x27, 0x28, 0x2E, 0x2F, isotp.SIDRoutineControl, 0x34, 0x36, 0x85:
		return RiskActuate
	}
	return RiskRead
}
