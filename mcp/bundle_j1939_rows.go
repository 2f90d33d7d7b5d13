package mcp

import (
	"time"

	"fieldtap/mcp/untrusted"

	"fieldtap/services/j1939"
)

// The j1939 bundle's answer rows, each built from what services/j1939
// returns by its xRowOf. The NAME, lamps and DTC rows serve every tool
// that shows one (j1939_inventory, j1939_faults, and the j1939_diag
// bundle's views).

type j1939PGNCountRow struct {
	PGN    uint32 `json:"pgn"`
	Name   string `json:"name"`
	Frames uint64 `json:"frames"`
}

// j1939TPCountersRow counts TP.CM control frames and session outcomes.
type j1939TPCountersRow struct {
	BAM            uint64 `json:"bam"`
	RTS            uint64 `json:"rts"`
	CTS            uint64 `json:"cts"`
	EoMA           uint64 `json:"eoma"`
	Abort          uint64 `json:"abort"`
	OtherCM        uint64 `json:"other_cm"`
	Complete       uint64 `json:"complete"`
	CompleteBAM    uint64 `json:"complete_bam"`
	CompleteRTS    uint64 `json:"complete_rts"`
	Aborted        uint64 `json:"aborted"`
	TimedOut       uint64 `json:"timed_out"`
	Superseded     uint64 `json:"superseded"`
	Refused        uint64 `json:"refused"`
	Invalid        uint64 `json:"invalid"`
	OrphanDT       uint64 `json:"orphan_dt"`
	BadSequence    uint64 `json:"bad_sequence"`
	DuplicateDT    uint64 `json:"duplicate_dt"`
	AbortUnmatched uint64 `json:"abort_unmatched"`
	ShortPackets   uint64 `json:"short_packets"`
}

// j1939MultiPGRow counts J1939-22 Multi-PG frames on CAN FD, the C-PGs
// decoded, and what was left undecoded.
type j1939MultiPGRow struct {
	Frames    uint64 `json:"frames"`
	CPGs      uint64 `json:"cpgs_decoded"`
	Trailer   uint64 `json:"cpgs_with_trailer_undecoded"`
	Malformed uint64 `json:"malformed_frames"`
	FDTP      uint64 `json:"fd_tp_frames_undecoded"`
}

// j1939SummaryRow is one port's J1939 overview.
type j1939SummaryRow struct {
	Port            string             `json:"port"`
	Frames          uint64             `json:"frames"`
	StandardSkipped uint64             `json:"standard_frames_skipped"`
	SourceAddresses []int              `json:"source_addresses"`
	DistinctPGNs    int                `json:"distinct_pgns"`
	PGNOverflow     uint64             `json:"pgn_table_overflow"`
	TopPGNs         []j1939PGNCountRow `json:"top_pgns"`
	TP              j1939TPCountersRow `json:"tp"`
	MultiPG         j1939MultiPGRow    `json:"multi_pg"`
	OpenSessions    int                `json:"tp_open_sessions"`
	Requests        uint64             `json:"requests"`
	AddressClaims   int                `json:"address_claims_kept"`
	ClaimConflicts  uint64             `json:"claim_conflicts"`
	MalformedClaims uint64             `json:"malformed_claims"`
	DM1Sources      []int              `json:"dm1_sources"`
	ActiveDTCs      int                `json:"active_dtcs"`
	LatestOverflow  uint64             `json:"latest_table_overflow"`
	FaultOverflow   uint64             `json:"fault_table_overflow"`
}

func j1939SummaryRowOf(p j1939.PortSummary) j1939SummaryRow {
	top := mapRows(p.TopPGNs, func(c j1939.PGNCount) j1939PGNCountRow { return j1939PGNCountRow(c) })
	return j1939SummaryRow{Port: p.Port, Frames: p.Frames, StandardSkipped: p.StandardSkipped, SourceAddresses: p.SourceAddresses,
		DistinctPGNs: p.DistinctPGNs, PGNOverflow: p.PGNOverflow, TopPGNs: top, TP: j1939TPCountersRow(p.TP), MultiPG: j1939MultiPGRow(p.MultiPG), OpenSessions: p.OpenSessions,
		Requests: p.Requests, AddressClaims: p.AddressClaims, ClaimConflicts: p.ClaimConflicts, MalformedClaims: p.MalformedClaims,
		DM1Sources: p.DM1Sources, ActiveDTCs: p.ActiveDTCs, LatestOverflow: p.LatestOverflow, FaultOverflow: p.FaultOverflow}
}

// j1939NameRow is a decoded 64-bit NAME (J1939-81).
type j1939NameRow struct {
	Hex                 string `json:"name"` // as sent, byte 0 first, like candump shows it
	IdentityNumber      uint32 `json:"identity_number"`
	ManufacturerCode    uint16 `json:"manufacturer_code"`
	ECUInstance         uint8  `json:"ecu_instance"`
	FunctionInstance    uint8  `json:"function_instance"`
	Function            uint8  `json:"function"`
	VehicleSystem       uint8  `json:"vehicle_system"`
	VehicleSystemInst   uint8  `json:"vehicle_system_instance"`
	IndustryGroup       uint8  `json:"industry_group"`
	ArbitraryAddressCap bool   `json:"arbitrary_address_capable"`
}

func j1939NameRowOf(n j1939.Name) j1939NameRow {
	return j1939NameRow{Hex: n.Hex, IdentityNumber: n.IdentityNumber, ManufacturerCode: n.ManufacturerCode, ECUInstance: n.ECUInstance,
		FunctionInstance: n.FunctionInstance, Function: n.Function, VehicleSystem: n.VehicleSystem, VehicleSystemInst: n.VehicleSystemInst,
		IndustryGroup: n.IndustryGroup, ArbitraryAddressCap: n.ArbitraryAddressCap}
}

// j1939LampsRow is a DM1/DM2's four lamp states (0 off, 1 on, 2 error,
// 3 not available) and their flash codes.
type j1939LampsRow struct {
	MIL         uint8 `json:"mil"`
	RedStop     uint8 `json:"red_stop"`
	AmberWarn   uint8 `json:"amber_warning"`
	Protect     uint8 `json:"protect"`
	FlashMIL    uint8 `json:"flash_mil"`
	FlashRed    uint8 `json:"flash_red_stop"`
	FlashAmber  uint8 `json:"flash_amber_warning"`
	FlashProtec uint8 `json:"flash_protect"`
}

// j1939DTCRow is one DTC in the J1939-73 version 4 layout.
type j1939DTCRow struct {
	SPN uint32 `json:"spn"`
	FMI uint8  `json:"fmi"`
	OC  uint8  `json:"oc"` // occurrence count
	CM  uint8  `json:"cm"` // SPN conversion method bit
}

func j1939LampsRowOf(l j1939.Lamps) j1939LampsRow { return j1939LampsRow(l) }

func j1939DTCRowOf(d j1939.DTC) j1939DTCRow { return j1939DTCRow(d) }

// j1939InventoryRow is one ECU of one port.
type j1939InventoryRow struct {
	Port        string         `json:"port"`
	SA          int            `json:"sa"`
	First       time.Time      `json:"first_seen"`
	Last        time.Time      `json:"last_seen"`
	Frames      uint64         `json:"frames"`
	Claimed     bool           `json:"claimed"`
	Name        *j1939NameRow  `json:"name"` // null when no Address Claimed was seen
	Conflicts   uint64         `json:"claim_conflicts"`
	CannotClaim bool           `json:"cannot_claim"`
	DM1Lamps    *j1939LampsRow `json:"dm1_lamps"` // null without a DM1
}

func j1939InventoryRowOf(r j1939.InventoryRow) j1939InventoryRow {
	return j1939InventoryRow{Port: r.Port, SA: r.SA, First: r.First, Last: r.Last, Frames: r.Frames, Claimed: r.Claimed,
		Name: rowOrNil(r.Name, j1939NameRowOf), Conflicts: r.Conflicts, CannotClaim: r.CannotClaim, DM1Lamps: rowOrNil(r.DM1Lamps, j1939LampsRowOf)}
}

// j1939FaultRow is one DTC a source listed in its DM1 or DM2. A DBC
// that defines the SPN has its signal name (the file author's text)
// fenced in dbc_spn_name; a built-in one is in spn_name.
type j1939FaultRow struct {
	Port       string         `json:"port"`
	SA         int            `json:"sa"`
	ECU        string         `json:"ecu"`
	Kind       string         `json:"kind"` // DM1 or DM2
	SPN        uint32         `json:"spn"`
	SPNName    string         `json:"spn_name,omitempty"`
	DBCSPNName untrusted.Text `json:"dbc_spn_name,omitempty"`
	FMI        uint8          `json:"fmi"`
	FMIText    string         `json:"fmi_text"`
	OC         uint8          `json:"oc"` // occurrence count, as last listed
	CM         uint8          `json:"cm"`
	Listed     bool           `json:"listed"`
	First      time.Time      `json:"first_seen"`
	Last       time.Time      `json:"last_seen"`
	Messages   uint64         `json:"messages"`
	Lamps      j1939LampsRow  `json:"lamps"`
	Via        string         `json:"via"`
}

func j1939FaultRowOf(c *call, cat *j1939.Catalogue, f j1939.FaultCode) j1939FaultRow {
	r := j1939FaultRow{Port: f.Port, SA: f.SA, ECU: f.ECU, Kind: f.Kind, SPN: f.SPN, FMI: f.FMI, FMIText: j1939.FMIText(f.FMI),
		OC: f.OC, CM: f.CM, Listed: f.Listed, First: f.First, Last: f.Last, Messages: f.Messages, Lamps: j1939LampsRowOf(f.Lamps), Via: f.Via}
	if p, ok := cat.Lookup(f.SPN); ok && p.Source == j1939.SourceBuiltin {
		r.SPNName = p.Name
	} else if ok {
		r.DBCSPNName = untrusted.Text(p.Name)
		c.text = append(c.text, textDBC)
	}
	return r
}

type j1939RequestCountRow struct {
	PGN   uint32 `json:"pgn"`
	Name  string `json:"name"`
	Count uint64 `json:"count"`
}

// j1939RequestsRow is one port's Request (PGN 59904) tally.
type j1939RequestsRow struct {
	Port      string                 `json:"port"`
	Total     uint64                 `json:"total"`
	Requested []j1939RequestCountRow `json:"requested"`
	Overflow  uint64                 `json:"requested_table_overflow"`
}

func j1939RequestsRowOf(p j1939.PortRequests) j1939RequestsRow {
	return j1939RequestsRow{Port: p.Port, Total: p.Total, Overflow: p.Overflow,
		Requested: mapRows(p.Requested, func(r j1939.RequestCount) j1939RequestCountRow { return j1939RequestCountRow(r) })}
}
