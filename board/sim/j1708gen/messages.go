package j1708gen

import (
	"fieldtap/board/sim/internal/drive"
)

// Message identifiers (SAE J1587).
const (
	EngineMID = 128
	BrakesMID = 136
)

// The engine's one active diagnostic code in PID 194: coolant temperature
// (PID 110) above the normal range (FMI 0), seen FaultOccurrences times.
const (
	FaultPID         = 110
	FaultFMI         = 0
	FaultOccurrences = 3
)

// Parameter identifiers (SAE J1587) and their scalings.
const (
	pidRoadSpeed   = 84  // 0.5 mph/bit
	pidPedal       = 91  // 0.4 %/bit
	pidLoad        = 92  // 0.5 %/bit
	pidCoolant     = 110 // 1 °F/bit
	pidRequest     = 128 // component-specific request: PID, MID
	pidBattery     = 168 // 0.05 V/bit, 2 bytes
	pidEngineSpeed = 190 // 0.25 rpm/bit, 2 bytes
	pidDiagnostics = 194 // length, then PID/SID, code, count per code
	pidDistance    = 245 // length 4, then 0.1 mi/bit, 4 bytes

	distanceLen = 4
	// Diagnostic code byte: bit 8 says an occurrence count follows; bit 7
	// (inactive), bit 6 (SID) and bit 5 (expansion PID) stay 0.
	codeHasCount = 0x80

	coolantF = 225 // 107 °C: hot enough for the fault
	// Pedal (0.4 %) and load (0.5 %) by drive phase.
	pedalAccel, loadAccel   = 150, 160 // 60 %, 80 %
	pedalCruise, loadCruise = 62, 80   // 25 %, 40 %
	loadCoast               = 10       // 5 %, pedal released
	loadIdle                = 20       // 10 %
	// engineSpeedRes is J1708's 0.25 rpm against drive's 1/8 rpm.
	engineSpeedRes = drive.RPMRes / 4
	// A mile is 1.609344 km: half-mph units from 1/256 km/h.
	microKmPerMile = 1_609_344
	halfMPH        = 2
)

// message appends the J1708 checksum to mid and data: the two's complement
// of their sum, so every byte sums to 0 mod 256.
func message(mid byte, data ...byte) []byte {
	b := append([]byte{mid}, data...)
	var sum byte
	for _, c := range b {
		sum += c
	}
	return append(b, -sum)
}

func roadSpeed(s drive.State) byte {
	return byte(s.Speed * halfMPH * 1_000_000 / (drive.KmH * microKmPerMile))
}

// speeds carries road speed and engine speed.
func speeds(s drive.State) []byte {
	rpm := s.Engine / engineSpeedRes
	return message(EngineMID, pidRoadSpeed, roadSpeed(s), pidEngineSpeed, byte(rpm), byte(rpm>>8))
}

// pedals carries accelerator pedal position and engine load.
func pedals(s drive.State) []byte {
	pedal, load := byte(pedalCruise), byte(loadCruise)
	switch {
	case s.Speed == 0 && s.Phase == 0:
		pedal, load = 0, loadIdle
	case s.Phase > 0:
		pedal, load = pedalAccel, loadAccel
	case s.Phase < 0:
		pedal, load = 0, loadCoast
	}
	return message(EngineMID, pidPedal, pedal, pidLoad, load)
}

// temperatures carries coolant temperature and battery voltage (1/20 V).
func temperatures(battery int) []byte {
	return message(EngineMID, pidCoolant, coolantF, pidBattery, byte(battery), byte(battery>>8))
}

// engineCodes is the engine's diagnostic table with its one active code.
func engineCodes() []byte {
	return message(EngineMID, pidDiagnostics, 3, FaultPID, codeHasCount|FaultFMI, FaultOccurrences)
}

// brakeCodes is the brakes' empty diagnostic table.
func brakeCodes() []byte { return message(BrakesMID, pidDiagnostics, 0) }

// distance carries total vehicle distance in 0.1 mi.
func distance(tenths int64) []byte {
	return message(EngineMID, pidDistance, distanceLen,
		byte(tenths), byte(tenths>>8), byte(tenths>>16), byte(tenths>>24))
}

// speedRequest asks the engine for its road speed.
func speedRequest() []byte { return message(BrakesMID, pidRequest, pidRoadSpeed, EngineMID) }

// speedReply answers speedRequest.
func speedReply(s drive.State) []byte { return message(EngineMID, pidRoadSpeed, roadSpeed(s)) }
