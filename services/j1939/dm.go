package j1939

// Lamp states, two bits each (J1939-73 §5.7.1).
const (
	LampOff          = 0
	LampOn           = 1
	LampError        = 2
	LampNotAvailable = 3
)

// dtcStart is where the first DTC sits in DM1/DM2: after two lamp bytes.
// (CANarchy's fixtures put it at byte 4; that is not the SAE layout.)
const (
	dtcStart = 2
	dtcLen   = 4
	// MaxDTCs bounds one message: a full 1785-byte transfer holds 445.
	MaxDTCs = (MaxTPSize - dtcStart) / dtcLen
)

// Lamps are the four lamp states of byte 0 and their flash codes (byte 1).
type Lamps struct {
	MIL         uint8 // malfunction indicator, bits 7-6
	RedStop     uint8 // bits 5-4
	AmberWarn   uint8 // bits 3-2
	Protect     uint8 // bits 1-0
	FlashMIL    uint8
	FlashRed    uint8
	FlashAmber  uint8
	FlashProtec uint8
}

// DTC is one diagnostic trouble code in the J1939-73 version 4 layout.
type DTC struct {
	SPN uint32 // 19 bits
	FMI uint8  // 5 bits
	OC  uint8  // occurrence count, 7 bits
	CM  uint8  // SPN conversion method bit
}

// DM is a decoded DM1 or DM2.
type DM struct {
	Lamps Lamps
	DTCs  []DTC
	// NoActive is true when the only entry is SPN 0 FMI 0: "no active DTC".
	NoActive bool
}

// ParseDM decodes a DM1/DM2 payload into dst (reused; DTCs appended to
// dst.DTCs[:0]). Entries of all 0xFF bytes are padding and skipped; a
// trailing partial entry is ignored. A payload shorter than two bytes has
// no lamps and reports ok false.
func ParseDM(b []byte, dst *DM) (ok bool) {
	dtcs := dst.DTCs[:0]
	*dst = DM{}
	if len(b) < dtcStart {
		dst.DTCs = dtcs
		return false
	}
	l0, l1 := b[0], b[1]
	dst.Lamps = Lamps{
		MIL: l0 >> 6 & 3, RedStop: l0 >> 4 & 3, AmberWarn: l0 >> 2 & 3, Protect: l0 & 3,
		FlashMIL: l1 >> 6 & 3, FlashRed: l1 >> 4 & 3, FlashAmber: l1 >> 2 & 3, FlashProtec: l1 & 3,
	}
	for i := dtcStart; i+dtcLen <= len(b) && len(dtcs) < MaxDTCs; i += dtcLen {
		e := b[i : i+dtcLen]
		if e[0] == 0xFF && e[1] == 0xFF && e[2] == 0xFF && e[3] == 0xFF {
			continue
		}
		dtcs = append(dtcs, DTC{
			SPN: uint32(e[0]) | uint32(e[1])<<8 | uint32(e[2]>>5)<<16,
			FMI: e[2] & 0x1F,
			OC:  e[3] & 0x7F,
			CM:  e[3] >> 7,
		})
	}
	dst.DTCs = dtcs
	dst.NoActive = len(dtcs) == 1 && dtcs[0].SPN == 0 && dtcs[0].FMI == 0
	return true
}
