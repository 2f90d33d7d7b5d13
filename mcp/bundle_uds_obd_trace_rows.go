package mcp

import (
	"time"

	"fieldtap/mcp/untrusted"
	"fieldtap/services/isotp"
	"fieldtap/services/obd"
)

// obdTraceRow is one value an ECU answered an OBD-II request with: a
// parameter, a DTC, a piece of vehicle information, or a refusal.
type obdTraceRow struct {
	Port string `json:"port"`
	// ID is the transaction's (uds_trace's id): the request's first frame
	// number. Answer and Index place the row within it.
	ID      uint64    `json:"id"`
	Answer  int       `json:"answer" jsonschema:"the answer's place among the transaction's answers (a functional request has one per ECU)"`
	Index   int       `json:"index" jsonschema:"the value's place in the answer"`
	Time    time.Time `json:"time" jsonschema:"the answer's first frame"`
	ECU     string    `json:"ecu" jsonschema:"CAN id the ECU answered on (7E8, 18DAF110)"`
	Tester  string    `json:"tester" jsonschema:"CAN id of the request (7DF, 7E0, 18DB33F1); empty when it was not seen"`
	Mode    string    `json:"mode" jsonschema:"the request's mode, hex (0x01 current data, 0x02 freeze frame, 0x03/0x07/0x0A stored/pending/permanent DTCs, 0x09 vehicle information)"`
	Service string    `json:"service"`
	PID     string    `json:"pid,omitempty" jsonschema:"hex PID (modes 01, 02) or information type (mode 09); absent on DTC rows"`
	Frame   *int      `json:"frame,omitempty" jsonschema:"freeze frame number (mode 02)"`
	Name    string    `json:"name,omitempty" jsonschema:"what the value is; absent for a PID not in the table (raw keeps its bytes)"`
	Value   *float64  `json:"value,omitempty" jsonschema:"by the public SAE J1979 formula"`
	Unit    string    `json:"unit,omitempty"`
	State   string    `json:"state,omitempty" jsonschema:"MIL on or MIL off (PID 01)"`
	// Text is ASCII the ECU wrote (VIN, calibration id, ECU name), fenced.
	Text      untrusted.Text `json:"text,omitempty" jsonschema:"VIN, calibration ID or ECU name as the ECU wrote it"`
	Code      string         `json:"code,omitempty" jsonschema:"DTC as a technician writes it (P0301), or a calibration verification number in hex"`
	Supported []string       `json:"supported,omitempty" jsonschema:"PIDs a supported-PID bitmap (PID 0x00, 0x20, ...) says the ECU answers"`
	Raw       string         `json:"raw,omitempty" jsonschema:"the value's data bytes in hex"`
	NRC       string         `json:"nrc,omitempty" jsonschema:"negative response code of a refusal (0x7F), hex"`
	NRCName   string         `json:"nrc_name,omitempty"`
	Problem   string         `json:"problem,omitempty" jsonschema:"what in the answer could not be decoded"`
}

func obdTraceRowOf(port string, id uint64, it obd.Item) obdTraceRow {
	return obdTraceRow{Port: port, ID: id, Answer: it.Answer, Index: it.Index, Time: it.Time, ECU: it.ECU, Tester: it.Tester,
		Mode: isotp.Hex8(it.Mode), Service: isotp.ServiceName(it.Mode), PID: it.PID, Frame: it.Frame, Name: it.Name, Value: it.Value.Value,
		Unit: it.Unit, State: it.State, Text: untrusted.Text(it.Text), Code: it.Code, Supported: it.Supported, Raw: it.Raw,
		NRC: it.NRC, NRCName: it.NRCName, Problem: it.Problem}
}
