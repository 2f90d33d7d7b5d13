package mcp

import (
	"fieldtap/mcp/untrusted"
	"fieldtap/services/transmit"
)

// scanRow is one request of a run scan and its outcome.
type scanRow struct {
	Step       int    `json:"step" jsonschema:"the request's frame number in the plan"`
	RequestID  string `json:"request_id"`
	ResponseID string `json:"response_id"`
	Service    string `json:"service" jsonschema:"session (a session change) or read_did"`
	Session    int    `json:"session" jsonschema:"the session asked for, or the one in effect for a read; 0: the ECU's current session"`
	DID        string `json:"did,omitempty"`
	Outcome    string `json:"outcome" jsonschema:"positive, negative or no_answer"`
	NRC        string `json:"nrc,omitempty"`
	NRCName    string `json:"nrc_name,omitempty"`
	Data       string `json:"data,omitempty" jsonschema:"the answer's data after the DID, hex"`
	// Text is the data as printable ASCII, written by the ECU.
	Text untrusted.Text `json:"text,omitempty"`
}

func scanRowOf(r transmit.ScanResult) scanRow {
	return scanRow{Step: r.Step, RequestID: r.RequestID, ResponseID: r.ResponseID, Service: r.Service, Session: r.Session, DID: r.DID,
		Outcome: r.Outcome, NRC: r.NRC, NRCName: r.NRCName, Data: r.Data, Text: untrusted.Text(r.Text)}
}
