package j1939gen

import (
	"encoding/binary"
	"time"

	"fieldtap/board/sim/internal/drive"
)

// Exported facts tests elsewhere can check decoders against.
const (
	// VIN is the vehicle identification number the engine sends (PGN
	// 65260); its check digit (position 9) is valid.
	VIN = "1FUJGLDR8TF000042"

	// The engine's one active fault in DM1: engine coolant temperature,
	// data valid but above normal operational range, most severe.
	FaultSPN         = 110
	FaultFMI         = 0
	FaultOccurrences = 3
)

const (
	dataLen     = 8    // every message here fills a classic CAN frame
	na          = 0xFF // "not available" fill (J1939-71)
	pctOffset   = 125  // percent torque and gear offsets
	tempOffset  = 40   // 1 °C/bit temperatures start at -40 °C
	kelvin      = 273  // 0.03125 °C/bit temperatures start at -273 °C
	fineTemp    = 32   // bits per °C at 0.03125 °C/bit
	coolantC    = 107  // hot enough for FaultSPN/FaultFMI
	fuelC       = 45
	oilC        = 102
	cabC        = 21
	baroHalfKPa = 202 // 101 kPa at 0.5 kPa/bit
	intakeRise  = 8   // °C the intake air gains over ambient

	torqueIdle   = 8 // percent of reference torque by phase
	torqueCruise = 35
	torqueAccel  = 70
	torqueCoast  = 0
	brakePedal   = 75 // 30 % at 0.4 %/bit while slowing

	modeIdle  = 0           // EEC1 torque mode: low idle governor
	modePedal = 1           // accelerator pedal / operator selection
	bitsOn    = 1           // two-bit J1939 state "on"
	dm1Lamps  = bitsOn << 4 // red stop lamp on; MIL, amber and protect off
	vinTerm   = '*'         // ends the VIN field (J1939-71 PGN 65260)
)

func le16(b []byte, v int64) { binary.LittleEndian.PutUint16(b, uint16(v)) }

func fill(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = na
	}
	return b
}

// eec1: torque mode, driver's demand and actual torque, engine speed.
func eec1(s drive.State) []byte {
	mode, torque := byte(modePedal), int64(torqueCruise)
	switch {
	case s.Speed == 0 && s.Phase == 0:
		mode, torque = modeIdle, torqueIdle
	case s.Phase > 0:
		torque = torqueAccel
	case s.Phase < 0:
		torque = torqueCoast
	}
	b := fill(dataLen)
	b[0] = 0xF0 | mode // high nibble: high-resolution torque not available
	b[1] = byte(torque + pctOffset)
	b[2] = byte(torque + pctOffset)
	le16(b[3:], s.Engine)
	b[5] = EngineAddress // source of the controlling command
	b[6] = 0xF0          // starter: start not requested
	b[7] = byte(torque + pctOffset)
	return b
}

// ccvs: wheel-based vehicle speed and the brake switch.
func ccvs(s drive.State) []byte {
	b := fill(dataLen)
	b[0] = 0xF0 // two-speed axle low, parking brake not set
	le16(b[1:], s.Speed)
	b[3] = 0 // cruise control off and disabled, brake and clutch released
	if s.Phase < 0 {
		b[3] |= bitsOn << 4 // brake switch pressed
	}
	return b
}

// et1: coolant, fuel and oil temperatures.
func et1() []byte {
	b := fill(dataLen)
	b[0] = coolantC + tempOffset
	b[1] = fuelC + tempOffset
	le16(b[2:], (oilC+kelvin)*fineTemp)
	return b
}

// dm1 carries the one active fault in the SAE J1939-73 layout (conversion
// method 0): lamps, flash, SPN low 16 bits, SPN high 3 bits with FMI, CM
// with occurrence count. After a DM11 clear at clearAt the engine reports
// no active DTC (SPN 0, FMI 0, lamps off) until it detects the fault
// again ReDetect later, counting from 1.
func dm1(at, clearAt time.Duration) []byte {
	b := fill(dataLen)
	b[1] = na // no lamp flashes
	if at >= clearAt && at < clearAt+ReDetect {
		b[0] = 0
		le16(b[2:], 0)
		b[4], b[5] = 0, 0
		return b
	}
	oc := FaultOccurrences
	if at >= clearAt {
		oc = 1
	}
	b[0] = dm1Lamps
	le16(b[2:], FaultSPN&0xFFFF)
	b[4] = byte(FaultSPN>>16&0x07)<<5 | FaultFMI&0x1F
	b[5] = byte(oc & 0x7F)
	return b
}

// etc1: driveline engaged, propshaft and input shaft speeds.
func etc1(s drive.State) []byte {
	b := fill(dataLen)
	b[0] = 0xC0 // no lockup, no shift in process
	in := int64(0)
	if s.Speed > 0 {
		b[0] |= bitsOn // driveline engaged
		in = s.Output * s.Ratio / drive.RatioRes
	}
	le16(b[1:], s.Output)
	b[3] = 0 // no clutch slip
	le16(b[5:], in)
	return b
}

// etc2: selected and current gear, actual ratio.
func etc2(s drive.State) []byte {
	b := fill(dataLen)
	b[0] = byte(s.Gear + pctOffset)
	le16(b[1:], s.Ratio)
	b[3] = byte(s.Gear + pctOffset)
	return b
}

// ebc1: brake switch and pedal position.
func ebc1(s drive.State) []byte {
	b := fill(dataLen)
	b[0] = 0x00 // ASR and ABS passive, EBS brake switch off
	b[1] = 0
	if s.Phase < 0 {
		b[0] |= bitsOn << 6
		b[1] = brakePedal
	}
	return b
}

// amb: barometric pressure, cab, ambient and intake air temperatures.
func amb(ambientC int64) []byte {
	b := fill(dataLen)
	b[0] = baroHalfKPa
	le16(b[1:], (cabC+kelvin)*fineTemp)
	le16(b[3:], (ambientC+kelvin)*fineTemp)
	b[5] = byte(ambientC + intakeRise + tempOffset)
	return b
}

// name packs an address-claim NAME (J1939-81), sent little-endian.
func name(identity uint32, function byte) []byte {
	const (
		manufacturer  = 0x7FF // top code: not a real manufacturer
		vehicleSystem = 1     // tractor (on-highway)
		industryGroup = 1     // on-highway equipment
	)
	n := uint64(identity&0x1FFFFF) |
		uint64(manufacturer)<<21 |
		uint64(function)<<40 |
		uint64(vehicleSystem)<<49 |
		uint64(industryGroup)<<60
	return binary.LittleEndian.AppendUint64(nil, n)
}

// Transport protocol (J1939-21).
const (
	tpBAM   = 32 // TP.CM control byte: broadcast announce
	tpBytes = 7  // data bytes per TP.DT packet
)

// bamCM announces a broadcast of size bytes of pgn.
func bamCM(size int, pgn uint32) []byte {
	packets := (size + tpBytes - 1) / tpBytes
	return []byte{tpBAM, byte(size), byte(size >> 8), byte(packets), na, byte(pgn), byte(pgn >> 8), byte(pgn >> 16)}
}

// bamDT is packet seq (1-based) of msg, padded with 0xFF.
func bamDT(msg []byte, seq int) []byte {
	b := fill(1 + tpBytes)
	b[0] = byte(seq)
	copy(b[1:], msg[(seq-1)*tpBytes:min(seq*tpBytes, len(msg))])
	return b
}

// ActiveDM1 is the engine's DM1 while its fault is active: what it
// broadcasts every second outside the workshop's clear, and what it
// answers to a Request for DM1.
func ActiveDM1() []byte { return dm1(0, never) }

// PreviousDM2 is the engine's DM2: its one previously active DTC.
func PreviousDM2() []byte { return dm2() }
