package j1587

// Kind says how a parameter's bytes are read.
type Kind uint8

// Parameter kinds.
const (
	KindRaw     Kind = iota // no definition here: bytes only
	KindNumber              // little-endian integer × scale + offset, in Unit
	KindBits                // bit-mapped status, shown as an integer
	KindText                // ASCII from the sender: untrusted text
	KindFaults              // PID 194 diagnostic-code table
	KindMulti               // PID 192 multisection parameter
	KindRequest             // a request naming another PID
)

var kindNames = [...]string{"raw", "number", "bits", "text", "faults", "multisection", "request"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "raw"
}

// Def describes one PID.
type Def struct {
	PID    uint16
	Name   string
	Kind   Kind
	Size   int // value bytes read for KindNumber/KindBits
	Signed bool
	Scale  float64
	Unit   string
}

// Well-known PIDs.
const (
	PIDRequest      = 0
	PIDRoadSpeed    = 84
	PIDCoolantTemp  = 110
	PIDCompRequest  = 128
	PIDBattery      = 168
	PIDEngineSpeed  = 190
	PIDMultisection = 192
	PIDFaults       = 194
	PIDSoftwareID   = 234
	PIDVIN          = 237
	PIDComponentID  = 243
	PIDDistance     = 245
	PIDEngineHours  = 247
)

// defs is the PID table: the openly documented PIDs, US units, scalings
// from grimm-co/stm32-j1708 j1708/pid_info.py (BSD-3-Clause). Kept small on
// purpose: a PID not here is reported as raw bytes, never guessed.
var defs = [...]Def{
	{PID: 0, Name: "request parameter", Kind: KindRequest, Size: 1},
	{PID: 2, Name: "transmitter system status", Kind: KindBits, Size: 1},
	{PID: 40, Name: "engine retarder switches status", Kind: KindBits, Size: 1},
	{PID: 43, Name: "ignition switch status", Kind: KindBits, Size: 1},
	{PID: 44, Name: "attention/warning indicator lamps status", Kind: KindBits, Size: 1},
	{PID: 49, Name: "ABS control status", Kind: KindBits, Size: 1},
	{PID: 51, Name: "throttle position", Kind: KindNumber, Size: 1, Scale: 0.4, Unit: "%"},
	{PID: 70, Name: "parking brake switch status", Kind: KindBits, Size: 1},
	{PID: 71, Name: "idle shutdown timer status", Kind: KindBits, Size: 1},
	{PID: 83, Name: "road speed limit status", Kind: KindBits, Size: 1},
	{PID: 84, Name: "road speed", Kind: KindNumber, Size: 1, Scale: 0.5, Unit: "mph"},
	{PID: 85, Name: "cruise control status", Kind: KindBits, Size: 1},
	{PID: 86, Name: "cruise control set speed", Kind: KindNumber, Size: 1, Scale: 0.5, Unit: "mph"},
	{PID: 89, Name: "power takeoff status", Kind: KindBits, Size: 1},
	{PID: 91, Name: "percent accelerator pedal position", Kind: KindNumber, Size: 1, Scale: 0.4, Unit: "%"},
	{PID: 92, Name: "percent engine load", Kind: KindNumber, Size: 1, Scale: 0.5, Unit: "%"},
	{PID: 96, Name: "fuel level", Kind: KindNumber, Size: 1, Scale: 0.5, Unit: "%"},
	{PID: 98, Name: "engine oil level", Kind: KindNumber, Size: 1, Scale: 0.5, Unit: "%"},
	{PID: 100, Name: "engine oil pressure", Kind: KindNumber, Size: 1, Scale: 0.5, Unit: "psi"},
	{PID: 102, Name: "boost pressure", Kind: KindNumber, Size: 1, Scale: 0.125, Unit: "psi"},
	{PID: 105, Name: "intake manifold temperature", Kind: KindNumber, Size: 1, Scale: 1, Unit: "degF"},
	{PID: 108, Name: "barometric pressure", Kind: KindNumber, Size: 1, Scale: 0.0625, Unit: "psi"},
	{PID: 110, Name: "engine coolant temperature", Kind: KindNumber, Size: 1, Scale: 1, Unit: "degF"},
	{PID: 111, Name: "coolant level", Kind: KindNumber, Size: 1, Scale: 0.5, Unit: "%"},
	{PID: 121, Name: "engine retarder status", Kind: KindBits, Size: 1},
	{PID: 122, Name: "engine retarder percent", Kind: KindNumber, Size: 1, Scale: 0.5, Unit: "%"},
	{PID: 128, Name: "component-specific parameter request", Kind: KindRequest, Size: 2},
	{PID: 158, Name: "battery potential, switched", Kind: KindNumber, Size: 2, Scale: 0.05, Unit: "V"},
	{PID: 160, Name: "main shaft speed", Kind: KindNumber, Size: 2, Scale: 0.25, Unit: "rpm"},
	{PID: 161, Name: "input shaft speed", Kind: KindNumber, Size: 2, Scale: 0.25, Unit: "rpm"},
	{PID: 164, Name: "injection control pressure", Kind: KindNumber, Size: 2, Scale: 1.0 / 256, Unit: "MPa"},
	{PID: 167, Name: "alternator potential", Kind: KindNumber, Size: 2, Scale: 0.05, Unit: "V"},
	{PID: 168, Name: "battery potential", Kind: KindNumber, Size: 2, Scale: 0.05, Unit: "V"},
	{PID: 171, Name: "ambient air temperature", Kind: KindNumber, Size: 2, Signed: true, Scale: 0.25, Unit: "degF"},
	{PID: 172, Name: "air inlet temperature", Kind: KindNumber, Size: 2, Signed: true, Scale: 0.25, Unit: "degF"},
	{PID: 173, Name: "exhaust gas temperature", Kind: KindNumber, Size: 2, Signed: true, Scale: 0.25, Unit: "degF"},
	{PID: 174, Name: "fuel temperature", Kind: KindNumber, Size: 2, Signed: true, Scale: 0.25, Unit: "degF"},
	{PID: 175, Name: "engine oil temperature", Kind: KindNumber, Size: 2, Signed: true, Scale: 0.25, Unit: "degF"},
	{PID: 177, Name: "transmission oil temperature", Kind: KindNumber, Size: 2, Signed: true, Scale: 0.25, Unit: "degF"},
	{PID: 183, Name: "fuel rate (instantaneous)", Kind: KindNumber, Size: 2, Scale: 1.0 / 64, Unit: "gal/h"},
	{PID: 184, Name: "instantaneous fuel economy", Kind: KindNumber, Size: 2, Scale: 1.0 / 256, Unit: "mpg"},
	{PID: 185, Name: "average fuel economy", Kind: KindNumber, Size: 2, Scale: 1.0 / 256, Unit: "mpg"},
	{PID: 186, Name: "power takeoff speed", Kind: KindNumber, Size: 2, Scale: 0.25, Unit: "rpm"},
	{PID: 187, Name: "power takeoff set speed", Kind: KindNumber, Size: 2, Scale: 0.25, Unit: "rpm"},
	{PID: 188, Name: "idle engine speed", Kind: KindNumber, Size: 2, Scale: 0.25, Unit: "rpm"},
	{PID: 189, Name: "rated engine speed", Kind: KindNumber, Size: 2, Scale: 0.25, Unit: "rpm"},
	{PID: 190, Name: "engine speed", Kind: KindNumber, Size: 2, Scale: 0.25, Unit: "rpm"},
	{PID: 191, Name: "transmission output shaft speed", Kind: KindNumber, Size: 2, Scale: 0.25, Unit: "rpm"},
	{PID: 192, Name: "multisection parameter", Kind: KindMulti},
	{PID: 194, Name: "transmitter system diagnostic code and occurrence count table", Kind: KindFaults},
	{PID: 234, Name: "software identification", Kind: KindText},
	{PID: 237, Name: "vehicle identification number", Kind: KindText},
	{PID: 243, Name: "component identification", Kind: KindText},
	{PID: 245, Name: "total vehicle distance", Kind: KindNumber, Size: 4, Scale: 0.1, Unit: "mi"},
	{PID: 247, Name: "total engine hours", Kind: KindNumber, Size: 4, Scale: 0.05, Unit: "h"},
}

// byPID indexes defs; built once from the constant table.
var byPID [MaxPID]int16

func init() {
	for i := range byPID {
		byPID[i] = -1
	}
	for i, d := range defs {
		byPID[d.PID] = int16(i)
	}
}

// Lookup returns pid's definition and whether this package has one.
func Lookup(pid uint16) (Def, bool) {
	if int(pid) >= MaxPID || byPID[pid] < 0 {
		return Def{PID: pid, Kind: KindRaw}, false
	}
	return defs[byPID[pid]], true
}

// Status says whether a Value has a number.
type Status uint8

// Value statuses.
const (
	StatusOK           Status = iota
	StatusNotAvailable        // all value bytes 0xFF (J1587 "not available")
	StatusShort               // fewer bytes than the PID's size
	StatusNoNumber            // raw, text, faults, multisection: no single number
)

var statusNames = [...]string{"ok", "not_available", "short", "no_number"}

func (s Status) String() string { return statusNames[s] }

// Value is one interpreted parameter. Text aliases the message and is
// untrusted sender text: fence it before showing it to a model or person.
type Value struct {
	Def    Def
	Known  bool
	Status Status
	Number float64 // scaled, when Status is StatusOK and Kind is number, bits or request
	Text   []byte  // KindText only; UntrustedText
}

// UntrustedText reports whether Text came from the bus.
func (v Value) UntrustedText() bool { return v.Def.Kind == KindText }

// Interpret reads p by its definition without allocating.
func Interpret(p Param) Value {
	d, known := Lookup(p.PID)
	v := Value{Def: d, Known: known}
	switch d.Kind {
	case KindNumber, KindBits, KindRequest:
	case KindText:
		v.Text, v.Status = p.Data, StatusNoNumber
		return v
	default:
		v.Status = StatusNoNumber
		return v
	}
	if len(p.Data) < d.Size {
		v.Status = StatusShort
		return v
	}
	var u uint32
	allFF := true
	for i := d.Size - 1; i >= 0; i-- {
		u = u<<8 | uint32(p.Data[i])
		allFF = allFF && p.Data[i] == 0xFF
	}
	if allFF && d.Kind == KindNumber {
		v.Status = StatusNotAvailable
		return v
	}
	if d.Kind != KindNumber {
		v.Number = float64(u)
		return v
	}
	x := float64(u)
	if d.Signed {
		shift := 32 - 8*d.Size
		x = float64(int32(u<<shift) >> shift)
	}
	v.Number = x * d.Scale
	return v
}
