package obd

// pid is one parameter of mode 01 (and of mode 02, which returns the
// same parameters as they were when a fault was stored).
type pid struct {
	name string
	unit string
	// size is the data bytes after the PID byte.
	size int
	// value is the public formula over exactly size bytes; nil when the
	// parameter is not a single number (decoded by kind instead).
	value func(d []byte) float64
	kind  pidKind
}

// pidKind is a parameter that is not one number.
type pidKind uint8

const (
	kindNumber    pidKind = iota
	kindSupported         // a bitmap of the next 32 PIDs
	kindMonitor           // PID 01: MIL and DTC count
	kindFreezeDTC         // mode 02 PID 02: the DTC that stored the frame
)

func a(d []byte) float64  { return float64(d[0]) }
func ab(d []byte) float64 { return float64(uint(d[0])<<8 | uint(d[1])) }

func percent(d []byte) float64 { return a(d) * 100 / 255 }
func temp(d []byte) float64    { return a(d) - 40 }
func trim(d []byte) float64    { return (a(d) - 128) * 100 / 128 }

// pids are the mode 01 parameters decoded here, by PID. A constant table.
var pids = map[uint8]pid{
	0x01: {name: "monitor status since DTCs cleared", unit: "DTCs", size: 4, kind: kindMonitor},
	0x02: {name: "DTC that caused the freeze frame", size: 2, kind: kindFreezeDTC},
	0x04: {name: "calculated engine load", unit: "%", size: 1, value: percent},
	0x05: {name: "engine coolant temperature", unit: "°C", size: 1, value: temp},
	0x06: {name: "short term fuel trim bank 1", unit: "%", size: 1, value: trim},
	0x07: {name: "long term fuel trim bank 1", unit: "%", size: 1, value: trim},
	0x08: {name: "short term fuel trim bank 2", unit: "%", size: 1, value: trim},
	0x09: {name: "long term fuel trim bank 2", unit: "%", size: 1, value: trim},
	0x0A: {name: "fuel pressure", unit: "kPa", size: 1, value: func(d []byte) float64 { return 3 * a(d) }},
	0x0B: {name: "intake manifold absolute pressure", unit: "kPa", size: 1, value: a},
	0x0C: {name: "engine speed", unit: "rpm", size: 2, value: func(d []byte) float64 { return ab(d) / 4 }},
	0x0D: {name: "vehicle speed", unit: "km/h", size: 1, value: a},
	0x0E: {name: "timing advance", unit: "° before TDC", size: 1, value: func(d []byte) float64 { return a(d)/2 - 64 }},
	0x0F: {name: "intake air temperature", unit: "°C", size: 1, value: temp},
	0x10: {name: "mass air flow rate", unit: "g/s", size: 2, value: func(d []byte) float64 { return ab(d) / 100 }},
	0x11: {name: "throttle position", unit: "%", size: 1, value: percent},
	0x1F: {name: "run time since engine start", unit: "s", size: 2, value: ab},
	0x21: {name: "distance traveled with MIL on", unit: "km", size: 2, value: ab},
	0x2F: {name: "fuel tank level input", unit: "%", size: 1, value: percent},
	0x31: {name: "distance traveled since codes cleared", unit: "km", size: 2, value: ab},
	0x33: {name: "absolute barometric pressure", unit: "kPa", size: 1, value: a},
	0x42: {name: "control module voltage", unit: "V", size: 2, value: func(d []byte) float64 { return ab(d) / 1000 }},
	0x46: {name: "ambient air temperature", unit: "°C", size: 1, value: temp},
	0x5C: {name: "engine oil temperature", unit: "°C", size: 1, value: temp},
	0x5E: {name: "engine fuel rate", unit: "L/h", size: 2, value: func(d []byte) float64 { return ab(d) / 20 }},
	0xA6: {name: "odometer", unit: "km", size: 4, value: func(d []byte) float64 {
		return float64(uint32(d[0])<<24|uint32(d[1])<<16|uint32(d[2])<<8|uint32(d[3])) / 10
	}},
}

// supportedPID: PIDs 0x00, 0x20, …, 0xE0 of modes 01, 02 and 09 are
// bitmaps saying which of the next 32 PIDs the ECU supports.
func supportedPID(p uint8) bool { return p%0x20 == 0 }

// bitmapSize is the size of a supported-PID bitmap.
const bitmapSize = 4

// lookup returns the parameter of mode 01/02 PID p, bitmaps included.
func lookup(p uint8) (pid, bool) {
	if supportedPID(p) {
		return pid{name: "PIDs supported", size: bitmapSize, kind: kindSupported}, true
	}
	d, ok := pids[p]
	return d, ok
}

// Mode 09 information types (InfoType) decoded here.
const (
	infoVIN     = 0x02
	infoCalID   = 0x04
	infoCVN     = 0x06
	infoECUName = 0x0A
	vinLength   = 17
	calIDLength = 16
	cvnLength   = 4
	nameLength  = 20
)

var infoNames = map[uint8]string{
	infoVIN:     "VIN",
	infoCalID:   "calibration ID",
	infoCVN:     "calibration verification number",
	infoECUName: "ECU name",
}
