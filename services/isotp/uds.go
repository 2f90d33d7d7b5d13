package isotp

import (
	"encoding/binary"
	"fmt"
)

// UDS service identifiers (ISO 14229-1) this package builds or recognises.
const (
	SIDSessionControl     = 0x10
	SIDClearDTC           = 0x14
	SIDReadDTC            = 0x19
	SIDReadDataByID       = 0x22
	sidReadScaling        = 0x24
	SIDWriteDataByID      = 0x2E
	sidIOControl          = 0x2F
	SIDRoutineControl     = 0x31
	SIDTesterPresent      = 0x3E
	SIDNegative           = 0x7F
	positiveOffset        = 0x40 // a positive answer's SID is the request's + 0x40
	positiveBit           = 0x40 // set in every response SID, clear in every request SID
	nrcResponsePending    = 0x78
	suppressPositiveReply = 0x80
)

// ReadDTCInformation sub-functions the tools offer.
const (
	DTCCountByMask  = 0x01
	DTCByMask       = 0x02
	DTCSupported    = 0x0A
	dtcRecordLength = 4 // three DTC bytes and a status byte
)

// ServiceName names a request SID, or "" for one not in the table.
func ServiceName(sid byte) string {
	if i := serviceIndex[sid]; i > 0 {
		return serviceTable[i-1].Name
	}
	return ""
}

// Hex8 writes a SID or an NRC as every identifier is written: "0x22".
func Hex8(b byte) string { return fmt.Sprintf("0x%02X", b) }

// NRCName names a negative response code (ISO 14229-1 Annex A.1).
func NRCName(nrc byte) string {
	if n, ok := nrcNames[nrc]; ok {
		return n
	}
	return fmt.Sprintf("unknown NRC 0x%02X", nrc)
}

var nrcNames = map[byte]string{
	0x10: "generalReject",
	0x11: "serviceNotSupported",
	0x12: "subFunctionNotSupported",
	0x13: "incorrectMessageLengthOrInvalidFormat",
	0x14: "responseTooLong",
	0x21: "busyRepeatRequest",
	0x22: "conditionsNotCorrect",
	0x24: "requestSequenceError",
	0x25: "noResponseFromSubnetComponent",
	0x26: "failurePreventsExecutionOfRequestedAction",
	0x31: "requestOutOfRange",
	0x33: "securityAccessDenied",
	0x35: "invalidKey",
	0x36: "exceedNumberOfAttempts",
	0x37: "requiredTimeDelayNotExpired",
	0x70: "uploadDownloadNotAccepted",
	0x71: "transferDataSuspended",
	0x72: "generalProgrammingFailure",
	0x73: "wrongBlockSequenceCounter",
	0x78: "requestCorrectlyReceived-ResponsePending",
	0x7E: "subFunctionNotSupportedInActiveSession",
	0x7F: "serviceNotSupportedInActiveSession",
	0x81: "rpmTooHigh",
	0x82: "rpmTooLow",
	0x83: "engineIsRunning",
	0x84: "engineIsNotRunning",
	0x85: "engineRunTimeTooLow",
	0x86: "temperatureTooHigh",
	0x87: "temperatureTooLow",
	0x88: "vehicleSpeedTooHigh",
	0x89: "vehicleSpeedTooLow",
	0x8A: "throttle/PedalTooHigh",
	0x8B: "throttle/PedalTooLow",
	0x8C: "transmissionRangeNotInNeutral",
	0x8D: "transmissionRangeNotInGear",
	0x8F: "brakeSwitch(es)NotClosed",
	0x90: "shifterLeverNotInPark",
	0x91: "torqueConverterClutchLocked",
	0x92: "voltageTooHigh",
	0x93: "voltageTooLow",
}

// Request builders. Each returns the UDS payload, before ISO-TP framing.

// SessionControl asks for diagnostic session sub (1 default, 2
// programming, 3 extended).
func SessionControl(sub byte) []byte { return []byte{SIDSessionControl, sub} }

// ReadDataByID reads one data identifier.
func ReadDataByID(did uint16) []byte { return []byte{SIDReadDataByID, byte(did >> 8), byte(did)} }

// ReadDTC asks for DTC information; mask applies to sub-functions 0x01 and
// 0x02 and is omitted for 0x0A.
func ReadDTC(sub, mask byte) []byte {
	if sub == DTCSupported {
		return []byte{SIDReadDTC, sub}
	}
	return []byte{SIDReadDTC, sub, mask}
}

// TesterPresent keeps a session open; with suppress the ECU sends no reply.
func TesterPresent(suppress bool) []byte {
	sub := byte(0)
	if suppress {
		sub |= suppressPositiveReply
	}
	return []byte{SIDTesterPresent, sub}
}

// Response is a decoded UDS answer.
type Response struct {
	Positive bool
	Service  string
	// Pending is true for NRC 0x78: the ECU will answer later (P2*).
	Pending bool
	NRC     string // hex code of a negative response
	NRCName string
	// Raw is the whole answer in hex.
	Raw string
	// Session control: the session and the ECU's P2/P2* timings.
	Session  *int
	P2Millis *int
	P2StarMs *int
	DID      string
	DataHex  string
	// DataText is the data as printable ASCII when every byte is; it is
	// ECU-supplied text and must be fenced by whoever shows it to a model.
	DataText         string
	AvailabilityMask string
	DTCCount         *int
	DTCs             []DTC
	// Problem says why a positive answer could not be fully decoded.
	Problem string
}

// DTC is one UDS trouble code with its status byte.
type DTC struct {
	Code   string // 3 bytes hex
	Status string // status byte hex
}

// Decode reads an answer to req. An answer to another service is a
// Problem, not a guess.
func Decode(req, resp []byte) Response {
	r := Response{Raw: fmt.Sprintf("%X", resp)}
	if len(req) == 0 || len(resp) == 0 {
		r.Problem = "empty request or answer"
		return r
	}
	sid := req[0]
	r.Service = ServiceName(sid)
	if resp[0] == SIDNegative {
		if len(resp) < 3 {
			r.Problem = "negative response shorter than 3 bytes"
			return r
		}
		if resp[1] != sid {
			r.Problem = fmt.Sprintf("negative response for service 0x%02X, asked 0x%02X", resp[1], sid)
		}
		r.NRC, r.NRCName = Hex8(resp[2]), NRCName(resp[2])
		r.Pending = resp[2] == nrcResponsePending
		return r
	}
	if resp[0] != sid+positiveOffset {
		r.Problem = fmt.Sprintf("answer SID 0x%02X does not answer 0x%02X", resp[0], sid)
		return r
	}
	r.Positive = true
	body := resp[1:]
	switch sid {
	case SIDSessionControl:
		if len(body) < 5 {
			r.Problem = "session control answer shorter than 6 bytes"
			break
		}
		s, p2, p2s := int(body[0]), int(binary.BigEndian.Uint16(body[1:])), int(binary.BigEndian.Uint16(body[3:]))*10
		r.Session, r.P2Millis, r.P2StarMs = &s, &p2, &p2s
	case SIDReadDataByID:
		if len(body) < 2 {
			r.Problem = "ReadDataByIdentifier answer without a DID"
			break
		}
		r.DID = fmt.Sprintf("0x%04X", binary.BigEndian.Uint16(body))
		if len(req) >= 3 && (body[0] != req[1] || body[1] != req[2]) {
			r.Problem = fmt.Sprintf("answer carries DID %s, asked 0x%02X%02X", r.DID, req[1], req[2])
		}
		r.DataHex = fmt.Sprintf("%X", body[2:])
		if printable(body[2:]) {
			r.DataText = string(body[2:])
		}
	case SIDReadDTC:
		decodeDTC(&r, body)
	}
	return r
}

func decodeDTC(r *Response, body []byte) {
	if len(body) < 2 {
		r.Problem = "ReadDTCInformation answer shorter than 3 bytes"
		return
	}
	r.AvailabilityMask = fmt.Sprintf("%02X", body[1])
	switch body[0] {
	case DTCCountByMask:
		if len(body) < 5 {
			r.Problem = "DTC count answer shorter than 6 bytes"
			return
		}
		n := int(binary.BigEndian.Uint16(body[3:]))
		r.DTCCount = &n
	case DTCByMask, DTCSupported:
		recs := body[2:]
		if len(recs)%dtcRecordLength != 0 {
			r.Problem = fmt.Sprintf("%d trailing bytes after the last whole DTC record", len(recs)%dtcRecordLength)
		}
		r.DTCs = []DTC{}
		for i := 0; i+dtcRecordLength <= len(recs); i += dtcRecordLength {
			r.DTCs = append(r.DTCs, DTC{Code: fmt.Sprintf("%06X", recs[i:i+3]), Status: fmt.Sprintf("%02X", recs[i+3])})
		}
		n := len(r.DTCs)
		r.DTCCount = &n
	default:
		r.Problem = fmt.Sprintf("sub-function 0x%02X is not decoded", body[0])
	}
}

func printable(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		if c < 0x20 || c > 0x7E {
			return false
		}
	}
	return true
}
