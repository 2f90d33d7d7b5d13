package mcp

import (
	"encoding/hex"
	"fmt"
	"reflect"
	"strconv"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"fieldtap/drivers/wire"
	"fieldtap/services/isotp"
	"fieldtap/services/j1939"
	"fieldtap/services/transmit"
)

// The argument types of the transmit bundle. Every range, enum, pattern
// and default comes from the constants the planners in services/transmit
// check, so the schema a client reads is what the box enforces.

// txPort is the one port a transmitting tool plans for: required, since a
// plan goes on exactly one bus.
type txPort string

func (txPort) argSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", Description: "the port to send on, as transmit_status lists it"}
}

// dryRun is true unless the caller says otherwise: a dry run only plans.
type dryRun bool

func (dryRun) argSchema() *jsonschema.Schema {
	return withDefault(&jsonschema.Schema{Type: "boolean", Description: "default true: make and return the plan, send nothing"}, true)
}

// txGate is the shared part of every transmitting tool's arguments.
type txGate struct {
	DryRun    *dryRun `json:"dry_run,omitempty"`
	AckActive bool    `json:"ack_active,omitempty" jsonschema:"must be true to leave dry run; read the plan first"`
	Override  string  `json:"override_conflict,omitempty" jsonschema:"why to send although the plan's bus_check found another node on its id or source address; audited"`
}

func (g txGate) dry() bool { return g.DryRun == nil || bool(*g.DryRun) }

// requestDA is the address a J1939 request goes to: a sourceAddress,
// every ECU unless given.
type requestDA sourceAddress

func (requestDA) argSchema() *jsonschema.Schema {
	return withDefault(sourceAddress(0).argSchema(), j1939.AddrGlobal)
}

func (a *requestDA) value() uint8 {
	if a == nil {
		return j1939.AddrGlobal
	}
	return uint8(*a)
}

// toolSA is this box's own J1939 address: a sourceAddress, the off-board
// diagnostic tool's unless given.
type toolSA sourceAddress

func (toolSA) argSchema() *jsonschema.Schema {
	return withDefault(sourceAddress(0).argSchema(), transmit.DefaultToolAddress)
}

func (a *toolSA) value() uint8 {
	if a == nil {
		return transmit.DefaultToolAddress
	}
	return uint8(*a)
}

// priorityArg is a J1939 priority, 0 most urgent.
type priorityArg int

func (priorityArg) argSchema() *jsonschema.Schema {
	return withDefault(intSchema("J1939 priority, 0 (most urgent) to 7", 0, transmit.MaxPriority), transmit.DefaultRequestPriority)
}

func (p *priorityArg) value() uint8 {
	if p == nil {
		return transmit.DefaultRequestPriority
	}
	return uint8(*p)
}

// dmArg is a J1939-73 diagnostic message j1939_request_dm asks for.
type dmArg string

func (dmArg) argSchema() *jsonschema.Schema {
	return enumArg("DM1 (active faults), DM2 (previously active), DM3 (CLEAR previously active) or DM11 (CLEAR active); DM3 and DM11 erase fault memory and need a person's confirmation",
		transmit.DMNames())
}

// udsServices are the UDS services uds_request offers, by name. Others
// (programming, writing, routines) are not offered at all.
var udsServices = [...]struct {
	name string
	sid  byte
}{
	{"session_control", isotp.SIDSessionControl},
	{"read_did", isotp.SIDReadDataByID},
	{"read_dtc", isotp.SIDReadDTC},
	{"tester_present", isotp.SIDTesterPresent},
}

type udsServiceArg string

func (udsServiceArg) argSchema() *jsonschema.Schema {
	names := make([]string, len(udsServices))
	for i, s := range udsServices {
		names[i] = s.name
	}
	return enumArg("session_control (0x10), read_did (0x22), read_dtc (0x19) or tester_present (0x3E)", names)
}

func (s udsServiceArg) sid() byte {
	for _, u := range udsServices {
		if u.name == string(s) {
			return u.sid
		}
	}
	panic("uds service " + string(s) + " passed the schema's enum") // the checker ran first
}

// UDS diagnostic sessions (ISO 14229-1 DiagnosticSessionControl). The
// programming session prepares an ECU for reflashing: it is not offered.
const (
	udsDefaultSession  = 1
	udsExtendedSession = 3
)

type udsSessionArg int

func (udsSessionArg) argSchema() *jsonschema.Schema {
	s := intSchema("session_control: 1 (default) or 3 (extended); programming (2) is not offered", udsDefaultSession, udsExtendedSession)
	s.Enum = []any{udsDefaultSession, udsExtendedSession}
	return s
}

// didPattern is a 16-bit data identifier in hex, written "0xF190" as
// every answer writes it; the bare "F190" of earlier clients still reads.
const didPattern = "^(0[xX])?[0-9A-Fa-f]{4}$"

type didArg string

func (didArg) argSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", Pattern: didPattern, Description: "read_did: the data identifier, 4 hex digits, 0x optional (0xF190 is the VIN)"}
}

type dtcReportArg int

func (dtcReportArg) argSchema() *jsonschema.Schema {
	s := withDefault(intSchema("read_dtc sub-function: 1 count by status mask, 2 DTCs by status mask, 10 supported DTCs", isotp.DTCCountByMask, isotp.DTCSupported), isotp.DTCByMask)
	s.Enum = []any{isotp.DTCCountByMask, isotp.DTCByMask, isotp.DTCSupported}
	return s
}

// dtcStatusAll selects every DTC status bit.
const dtcStatusAll = 0xFF

type statusMaskArg int

func (statusMaskArg) argSchema() *jsonschema.Schema {
	return withDefault(intSchema("read_dtc status mask, 0 to 255", 0, dtcStatusAll), dtcStatusAll)
}

// udsRequestID and udsResponseID are canIDArgs with the ISO 15765-4
// defaults of the first ECU.
type udsRequestID canIDArg

func (udsRequestID) argSchema() *jsonschema.Schema {
	return withDefault(canIDArg("").argSchema(), wire.FormatCANID(transmit.DefaultUDSRequestID))
}

type udsResponseID canIDArg

func (udsResponseID) argSchema() *jsonschema.Schema {
	return withDefault(canIDArg("").argSchema(), wire.FormatCANID(transmit.DefaultUDSResponseID))
}

// canIDValue is a pattern-checked hex CAN id: up to 3 digits 11-bit, more
// 29-bit; the bits beyond each width are refused, naming arg.
func canIDValue(arg, s string) (uint32, error) {
	v, _ := strconv.ParseUint(s, 16, 32)
	switch {
	case len(s) > 3 && v > wire.CANEFFMask:
		return 0, argErr(arg, "a 29-bit id is at most 1FFFFFFF", "%s is more than 29 bits", s)
	case len(s) > 3:
		return uint32(v) | wire.CANEFF, nil
	case v > wire.CANSFFMask:
		return 0, argErr(arg, "write a 29-bit id with 4 or more digits", "%s is more than 11 bits", s)
	}
	return uint32(v), nil
}

// hexBytesPattern is up to n bytes of hex, two digits each, no spaces.
func hexBytesPattern(n int) string { return fmt.Sprintf("^([0-9A-Fa-f]{2}){0,%d}$", n) }

// canDataArg is a classic CAN data field in hex.
type canDataArg string

func (canDataArg) argSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", Pattern: hexBytesPattern(transmit.MaxCANData),
		Description: fmt.Sprintf("hex data, 0 to %d bytes, two digits each, no spaces", transmit.MaxCANData)}
}

// j1708DataArg is a J1708 message's data: what goes between MID and checksum.
type j1708DataArg string

// j1708DataMax is a message's bytes without MID and checksum.
const j1708DataMax = transmit.MaxJ1708 - 2

func (j1708DataArg) argSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", Pattern: hexBytesPattern(j1708DataMax),
		Description: fmt.Sprintf("hex bytes after the MID, 0 to %d, two digits each; the checksum is added", j1708DataMax)}
}

// delayArg is the gap before a frame, in milliseconds.
type delayArg float64

func (delayArg) argSchema() *jsonschema.Schema {
	lo, hi := 0.0, float64(transmit.MaxDelay/time.Millisecond)
	return &jsonschema.Schema{Type: "number", Minimum: &lo, Maximum: &hi,
		Description: fmt.Sprintf("gap: milliseconds to wait after the previous frame, 0 to %g", hi)}
}

type canSendFrame struct {
	ID       canIDArg   `json:"id"`
	Extended *bool      `json:"extended,omitempty" jsonschema:"force 29-bit (true) or 11-bit (false) whatever the digits say"`
	Data     canDataArg `json:"data,omitempty"`
	Delay    delayArg   `json:"delay_ms,omitempty"`
}

// canSendFrames is can_send's frames: 1 to transmit.MaxFrames of them.
type canSendFrames []canSendFrame

func (canSendFrames) argSchema() *jsonschema.Schema {
	t := reflect.TypeFor[canSendFrame]()
	types := map[reflect.Type]*jsonschema.Schema{}
	collectArgTypes(t, types, map[reflect.Type]bool{})
	item, err := jsonschema.ForType(t, &jsonschema.ForOptions{TypeSchemas: types})
	if err != nil {
		panic(err)
	}
	lo, hi := 1, transmit.MaxFrames
	return &jsonschema.Schema{Type: "array", Items: item, MinItems: &lo, MaxItems: &hi,
		Description: fmt.Sprintf("the frames, in order, 1 to %d", transmit.MaxFrames)}
}

func (fs canSendFrames) frames() ([]transmit.Frame, error) {
	out := make([]transmit.Frame, len(fs))
	for i, f := range fs {
		arg := fmt.Sprintf("frames[%d].id", i)
		id, err := canIDValue(arg, string(f.ID))
		if err != nil {
			return nil, err
		}
		if f.Extended != nil {
			id &^= wire.CANEFF
			if *f.Extended {
				id |= wire.CANEFF
			}
		}
		out[i] = transmit.Frame{ID: id, Data: hexBytes(string(f.Data)), Delay: time.Duration(float64(f.Delay) * float64(time.Millisecond))}
	}
	return out, nil
}

// hexBytes decodes pattern-checked hex.
func hexBytes(s string) []byte {
	b, _ := hex.DecodeString(s)
	return b
}

// maxFramesArg bounds a replayed window.
type maxFramesArg int

func (maxFramesArg) argSchema() *jsonschema.Schema {
	return withDefault(intSchema(fmt.Sprintf("refuse a window holding more frames than this, 1 to %d: a plan is one object a person reads whole, so a larger window is refused, never cut", transmit.MaxFrames),
		1, transmit.MaxFrames), transmit.MaxFrames)
}
