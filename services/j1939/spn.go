package j1939

// SPNDef is one curated Suspect Parameter: where it sits in its PGN and
// how the raw value scales. Byte is 1-based as J1939-71 documents it.
type SPNDef struct {
	SPN    uint32
	PGN    uint32
	Name   string
	Byte   int // first byte, 1-based
	Bytes  int // 1, 2 or 4, little-endian
	Scale  float64
	Offset float64
	Unit   string
}

// spnTable is the curated set: byte-aligned SPNs of common broadcast PGNs,
// laid out as published in public J1939-71 summaries. SPN 190 and 84 match
// CSS Electronics' SAE J1939 demo DBC (testdata css_CSS-Electronics-SAE-
// J1939-DEMO.dbc); docs/j1939.md lists each and its source. A constant
// table, never written.
var spnTable = []SPNDef{
	{SPN: 512, PGN: PGNEEC1, Name: "Driver's demand engine percent torque", Byte: 2, Bytes: 1, Scale: 1, Offset: -125, Unit: "%"},
	{SPN: 513, PGN: PGNEEC1, Name: "Actual engine percent torque", Byte: 3, Bytes: 1, Scale: 1, Offset: -125, Unit: "%"},
	{SPN: 190, PGN: PGNEEC1, Name: "Engine speed", Byte: 4, Bytes: 2, Scale: 0.125, Unit: "rpm"},
	{SPN: 1483, PGN: PGNEEC1, Name: "Source address of controlling device", Byte: 6, Bytes: 1, Scale: 1, Unit: "address"},
	{SPN: 91, PGN: 61443, Name: "Accelerator pedal position 1", Byte: 2, Bytes: 1, Scale: 0.4, Unit: "%"},
	{SPN: 92, PGN: 61443, Name: "Engine percent load at current speed", Byte: 3, Bytes: 1, Scale: 1, Unit: "%"},
	{SPN: 524, PGN: 61445, Name: "Transmission selected gear", Byte: 1, Bytes: 1, Scale: 1, Offset: -125, Unit: "gear"},
	{SPN: 523, PGN: 61445, Name: "Transmission current gear", Byte: 4, Bytes: 1, Scale: 1, Offset: -125, Unit: "gear"},
	{SPN: 84, PGN: PGNCCVS1, Name: "Wheel-based vehicle speed", Byte: 2, Bytes: 2, Scale: 1.0 / 256, Unit: "km/h"},
	{SPN: 86, PGN: PGNCCVS1, Name: "Cruise control set speed", Byte: 6, Bytes: 1, Scale: 1, Unit: "km/h"},
	{SPN: 110, PGN: PGNET1, Name: "Engine coolant temperature", Byte: 1, Bytes: 1, Scale: 1, Offset: -40, Unit: "°C"},
	{SPN: 174, PGN: PGNET1, Name: "Engine fuel temperature 1", Byte: 2, Bytes: 1, Scale: 1, Offset: -40, Unit: "°C"},
	{SPN: 175, PGN: PGNET1, Name: "Engine oil temperature 1", Byte: 3, Bytes: 2, Scale: 0.03125, Offset: -273, Unit: "°C"},
	{SPN: 98, PGN: 65263, Name: "Engine oil level", Byte: 3, Bytes: 1, Scale: 0.4, Unit: "%"},
	{SPN: 100, PGN: 65263, Name: "Engine oil pressure", Byte: 4, Bytes: 1, Scale: 4, Unit: "kPa"},
	{SPN: 111, PGN: 65263, Name: "Engine coolant level", Byte: 8, Bytes: 1, Scale: 0.4, Unit: "%"},
	{SPN: 183, PGN: 65266, Name: "Engine fuel rate", Byte: 1, Bytes: 2, Scale: 0.05, Unit: "L/h"},
	{SPN: 184, PGN: 65266, Name: "Engine instantaneous fuel economy", Byte: 3, Bytes: 2, Scale: 1.0 / 512, Unit: "km/L"},
	{SPN: 108, PGN: 65269, Name: "Barometric pressure", Byte: 1, Bytes: 1, Scale: 0.5, Unit: "kPa"},
	{SPN: 171, PGN: 65269, Name: "Ambient air temperature", Byte: 4, Bytes: 2, Scale: 0.03125, Offset: -273, Unit: "°C"},
	{SPN: 172, PGN: 65269, Name: "Engine air inlet temperature", Byte: 6, Bytes: 1, Scale: 1, Offset: -40, Unit: "°C"},
	{SPN: 102, PGN: 65270, Name: "Engine intake manifold 1 pressure (boost)", Byte: 2, Bytes: 1, Scale: 2, Unit: "kPa"},
	{SPN: 105, PGN: 65270, Name: "Engine intake manifold 1 temperature", Byte: 3, Bytes: 1, Scale: 1, Offset: -40, Unit: "°C"},
	{SPN: 173, PGN: 65270, Name: "Engine exhaust gas temperature", Byte: 6, Bytes: 2, Scale: 0.03125, Offset: -273, Unit: "°C"},
	{SPN: 168, PGN: 65271, Name: "Battery potential / power input 1", Byte: 5, Bytes: 2, Scale: 0.05, Unit: "V"},
	{SPN: 247, PGN: 65253, Name: "Engine total hours of operation", Byte: 1, Bytes: 4, Scale: 0.05, Unit: "h"},
	{SPN: 245, PGN: 65248, Name: "Total vehicle distance", Byte: 5, Bytes: 4, Scale: 0.125, Unit: "km"},
	{SPN: 96, PGN: 65276, Name: "Fuel level 1", Byte: 2, Bytes: 1, Scale: 0.4, Unit: "%"},
}

// SPNs returns the curated definitions (a copy).
func SPNs() []SPNDef { return append([]SPNDef(nil), spnTable...) }

// LookupSPN returns the definition of spn.
func LookupSPN(spn uint32) (SPNDef, bool) {
	for _, d := range spnTable {
		if d.SPN == spn {
			return d, true
		}
	}
	return SPNDef{}, false
}

// A sample's status and unit are numbers in these tables (Sample).
const (
	statusOK uint8 = iota
	statusError
	statusNotAvailable
	statusReserved
	statusMissing
)

var statusNames = [...]string{statusOK: StatusOK, statusError: StatusError, statusNotAvailable: StatusNotAvailable, statusReserved: StatusReserved, statusMissing: StatusMissing}

// unitNames are the built-in table's units, "" first: a parameter's
// Unit is only ever one of them (a DBC's unit is its DBCUnit).
var unitNames, unitCodes = func() ([]string, map[string]uint8) {
	names, codes := []string{""}, map[string]uint8{"": 0}
	for _, d := range spnTable {
		if _, ok := codes[d.Unit]; !ok {
			codes[d.Unit] = uint8(len(names))
			names = append(names, d.Unit)
		}
	}
	return names, codes
}()

// unitCode numbers unit in unitNames; a unit outside the built-in table
// (none is made so) would read as "".
func unitCode(unit string) uint8 { return unitCodes[unit] }

// Value states (J1939-71 §5.1.4 ranges for byte-aligned parameters).
const (
	StatusOK           = "ok"
	StatusError        = "error"         // top byte 0xFE
	StatusNotAvailable = "not_available" // top byte 0xFF
	StatusReserved     = "reserved"      // top byte 0xFB–0xFD
	StatusMissing      = "missing"       // the message is too short
)

// Value is one decoded SPN. Value is meaningful only when Status is "ok".
// Unit is the built-in table's; a parameter from an operator's DBC has
// its unit in its catalogue row (Param.DBCUnit), not in every sample.
type Value struct {
	SPN    uint32
	Raw    uint32
	Value  float64
	Unit   string
	Status string
}

// Decode extracts d from a PGN payload.
func (d SPNDef) Decode(data []byte) Value {
	v := Value{SPN: d.SPN, Unit: d.Unit}
	i := d.Byte - 1
	if i < 0 || i+d.Bytes > len(data) {
		v.Status = StatusMissing
		return v
	}
	var raw uint32
	for k := d.Bytes - 1; k >= 0; k-- {
		raw = raw<<8 | uint32(data[i+k])
	}
	v.Raw = raw
	switch top := data[i+d.Bytes-1]; {
	case top == 0xFF:
		v.Status = StatusNotAvailable
	case top == 0xFE:
		v.Status = StatusError
	case top >= 0xFB:
		v.Status = StatusReserved
	default:
		v.Status = StatusOK
		v.Value = float64(raw)*d.Scale + d.Offset
	}
	return v
}
