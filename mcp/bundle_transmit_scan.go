package mcp

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"fieldtap/services/transmit"
)

// uds_scan: a bounded DID scan as one plan under one confirmation.

// maxScanECUs and maxScanRanges bound the arguments; the plan's 256
// requests bound the rest.
const (
	maxScanECUs   = 8
	maxScanRanges = 32
)

type scanECUArg struct {
	RequestID  canIDArg `json:"request_id" jsonschema:"hex CAN id the requests go on (more than 3 digits is 29-bit)"`
	ResponseID canIDArg `json:"response_id" jsonschema:"hex CAN id the ECU answers on"`
}

// scanECUs is uds_scan's ECUs, 7E0/7E8 unless given.
type scanECUs []scanECUArg

func (scanECUs) argSchema() *jsonschema.Schema {
	t := reflect.TypeFor[scanECUArg]()
	types := map[reflect.Type]*jsonschema.Schema{}
	collectArgTypes(t, types, map[reflect.Type]bool{})
	item, err := jsonschema.ForType(t, &jsonschema.ForOptions{TypeSchemas: types})
	if err != nil {
		panic(err)
	}
	lo, hi := 1, maxScanECUs
	return &jsonschema.Schema{Type: "array", Items: item, MinItems: &lo, MaxItems: &hi,
		Description: fmt.Sprintf("the ECUs to scan, 1 to %d request/response id pairs; default 7E0/7E8", maxScanECUs)}
}

const didRangePattern = "^(0x)?[0-9A-Fa-f]{4}(-(0x)?[0-9A-Fa-f]{4})?$"

// scanDIDs is a list of DIDs and inclusive ranges: "F190", "0xF180-0xF19F".
type scanDIDs []string

func (scanDIDs) argSchema() *jsonschema.Schema {
	lo, hi := 1, maxScanRanges
	return &jsonschema.Schema{Type: "array", MinItems: &lo, MaxItems: &hi,
		Items:       &jsonschema.Schema{Type: "string", Pattern: didRangePattern},
		Description: fmt.Sprintf("DIDs and inclusive ranges, e.g. F190 or 0xF180-0xF19F, 1 to %d entries", maxScanRanges)}
}

func (ds scanDIDs) ranges() ([]transmit.DIDRange, error) {
	out := make([]transmit.DIDRange, len(ds))
	for i, d := range ds {
		from, to, ok := strings.Cut(d, "-")
		if !ok {
			to = from
		}
		a, err1 := strconv.ParseUint(strings.TrimPrefix(from, "0x"), 16, 16)
		b, err2 := strconv.ParseUint(strings.TrimPrefix(to, "0x"), 16, 16)
		if err1 != nil || err2 != nil {
			return nil, argErr(fmt.Sprintf("dids[%d]", i), "write a DID as 4 hex digits, a range as F180-F19F", "%q is not a DID or a range", d)
		}
		if a > b {
			return nil, argErr(fmt.Sprintf("dids[%d]", i), "write the lower DID first", "%q runs backwards", d)
		}
		out[i] = transmit.DIDRange{From: uint16(a), To: uint16(b)}
	}
	return out, nil
}

// scanSessions is the sessions a scan probes, in order.
type scanSessions []string

func (scanSessions) argSchema() *jsonschema.Schema {
	hi := len(transmit.ScanSessionNames())
	return &jsonschema.Schema{Type: "array", MaxItems: &hi, Items: enumArg("", transmit.ScanSessionNames()),
		Description: "sessions to read the DIDs in, in order (default, extended); empty or absent: the ECU's current session, no session change"}
}

type scanGap int

func (scanGap) argSchema() *jsonschema.Schema {
	return withDefault(intSchema("milliseconds between an answer and the next request", float64(transmit.MinScanGap/time.Millisecond), float64(transmit.MaxScanGap/time.Millisecond)),
		int(transmit.DefaultScanGap/time.Millisecond))
}

type udsScanIn struct {
	Port      txPort       `json:"port"`
	ECUs      scanECUs     `json:"ecus,omitempty"`
	DIDs      scanDIDs     `json:"dids"`
	Sessions  scanSessions `json:"sessions,omitempty"`
	GapMS     *scanGap     `json:"gap_ms,omitempty"`
	NoPadding bool         `json:"no_padding,omitempty" jsonschema:"send short frames instead of padding to 8 bytes with AA"`
	txGate
}

func (in udsScanIn) spec() (transmit.Spec, error) {
	ecus := []transmit.ScanECU{{RequestID: transmit.DefaultUDSRequestID, ResponseID: transmit.DefaultUDSResponseID}}
	if len(in.ECUs) > 0 {
		ecus = ecus[:0]
		for i, e := range in.ECUs {
			req, err := canIDValue(fmt.Sprintf("ecus[%d].request_id", i), string(e.RequestID))
			if err != nil {
				return transmit.Spec{}, err
			}
			resp, err := canIDValue(fmt.Sprintf("ecus[%d].response_id", i), string(e.ResponseID))
			if err != nil {
				return transmit.Spec{}, err
			}
			ecus = append(ecus, transmit.ScanECU{RequestID: req, ResponseID: resp})
		}
	}
	dids, err := in.DIDs.ranges()
	if err != nil {
		return transmit.Spec{}, err
	}
	gap := transmit.DefaultScanGap
	if in.GapMS != nil {
		gap = time.Duration(*in.GapMS) * time.Millisecond
	}
	return transmit.UDSScan{Port: string(in.Port), ECUs: ecus, Sessions: in.Sessions, DIDs: dids, Gap: gap, Pad: !in.NoPadding}.Spec()
}

var udsScan = tool[udsScanIn, txOut]{
	name:  "uds_scan",
	reads: readsNothing,
	desc: "Plan or run a UDS DID scan as one plan: ReadDataByIdentifier over DIDs and ranges on up to 8 ECUs, in the default and extended sessions if asked, " +
		"each request answered or given up (200 ms) before the next, at most 256 requests, one confirmation; the answer tallies each request per ECU and DID (scan)." + dryNote,
	hints: transmits(false),
	text:  []textSource{textUDS},
	run: func(c *call, in udsScanIn) (txOut, error) {
		return planAndMaybeRun(c, in.txGate, in.spec)
	},
}
