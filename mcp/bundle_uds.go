package mcp

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"fieldtap/drivers/wire"
	"fieldtap/mcp/untrusted"
	"fieldtap/services/canbus"
	"fieldtap/services/isotp"
)

// udsTools is the uds bundle: diagnostic sessions overheard on the CAN
// ports (services/isotp, docs/uds.md). It sends nothing; uds_request in
// the transmit bundle is the one that asks.
var udsTools = []toolDef{udsTraceTool, udsServicesTool, obdTraceTool}

// Where uds_trace reads from.
const (
	udsFromStore  = "store"  // the live store, fed every frame, outliving the frame ring
	udsFromFrames = "frames" // a fresh trace over the frame ring's window, with any addressing
)

type udsFromArg string

func (udsFromArg) argSchema() *jsonschema.Schema {
	return withDefault(enumArg("store: the live transaction store (outlives the frame ring, conventional ids); frames: a fresh trace over the stored frames of the window, with ids/extended", []string{udsFromStore, udsFromFrames}), udsFromStore)
}

type udsStatusArg string

func (udsStatusArg) argSchema() *jsonschema.Schema {
	return enumArg("only transactions with this status", []string{isotp.StatusPositive, isotp.StatusNegative, isotp.StatusNoResponse,
		isotp.StatusSuppressed, isotp.StatusOpen, isotp.StatusUnmatched})
}

// udsHexPattern is a SID or DID argument: hex, "0x" optional.
const udsHexPattern = "^(0[xX])?[0-9A-Fa-f]{1,6}$"

// udsSIDArg is a request service id.
type udsSIDArg string

func (udsSIDArg) argSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", Pattern: udsHexPattern, Description: "only this request service id, hex (0x22 ReadDataByIdentifier)"}
}

// udsDIDArg is the identifier an exchange addresses.
type udsDIDArg string

func (udsDIDArg) argSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", Pattern: udsHexPattern, Description: "only exchanges naming this DID, routine, report type, DTC group or local identifier, hex (0xF190)"}
}

// udsHex reads a hex argument the pattern has checked.
func udsHex(s string) uint32 {
	return hexValue(strings.TrimPrefix(strings.TrimPrefix(s, "0x"), "0X"))
}

// udsHasDID reports whether t names the identifier did.
func udsHasDID(t *isotp.Transaction, did uint32) bool {
	if t.DIDs == nil {
		return t.DID != "" && udsHex(t.DID) == did
	}
	return slices.ContainsFunc(t.DIDs, func(d string) bool { return udsHex(d) == did })
}

type udsTraceIn struct {
	From   udsFromArg   `json:"from,omitempty"`
	Status udsStatusArg `json:"status,omitempty"`
	SID    udsSIDArg    `json:"sid,omitempty"`
	DID    udsDIDArg    `json:"did,omitempty"`
	// IDs and Extended apply to from=frames: the live store reads the
	// conventional ids only.
	IDs      []canIDArg `json:"ids,omitempty" jsonschema:"only with from frames: hex CAN ids to read as ISO-TP instead of the conventional 0x700-0x7FF and 0x18DA/0x18DB ids"`
	Extended []canIDArg `json:"extended,omitempty" jsonschema:"only with from frames: hex CAN ids (among those read) that use extended addressing (a target address byte before the PCI)"`
	PortSelector
	window
	Paging
	Projection
}

// Bounds of what the uds tools say about rejected channels; the counts
// by reason (ports[].rejected_channels) stay whole.
const (
	// maxRejectedRows bounds the rejected channels uds_services lists: a
	// bus has a few stray ids in the diagnostic range.
	maxRejectedRows = 64
	// maxWarnedIDs bounds the ids one warning names.
	maxWarnedIDs = 8
)

// udsRejectedRow is one channel on an ISO-TP id that was not taken for
// a diagnostic one.
type udsRejectedRow struct {
	Port       string    `json:"port"`
	CANID      string    `json:"can_id"`
	Addressing string    `json:"addressing"`
	Target     *int      `json:"target_address" jsonschema:"N_TA under extended addressing; null otherwise"`
	Reason     string    `json:"reason" jsonschema:"not_isotp (a frame no ISO-TP sender writes; no longer read), both_ways (requests and answers on one id; no longer read) or unpaired (no answered exchange with another id; still read)"`
	Why        string    `json:"why"`
	Since      time.Time `json:"since" jsonschema:"bus time of the verdict"`
	Frames     uint64    `json:"frames" jsonschema:"the channel's frames, before and after the verdict"`
}

func udsRejectedRowOf(port string, r isotp.Rejection) udsRejectedRow {
	row := udsRejectedRow{Port: port, CANID: wire.FormatCANID(r.Channel.ID), Addressing: r.Channel.Addressing.String(),
		Reason: r.Reason.String(), Why: r.Reason.Why(), Since: r.Since, Frames: r.Frames}
	if r.Channel.Addressing == isotp.AddrExtended {
		ta := int(r.Channel.Target)
		row.Target = &ta
	}
	return row
}

// udsWarnRejected says what a port's answer leaves out: the channels on
// ISO-TP ids rejected as not diagnostic, and the transactions held until
// their channel is paired.
func udsWarnRejected(c *call, port string, rs []isotp.Rejection, held int) {
	if len(rs) > 0 {
		ids := make([]string, 0, min(len(rs), maxWarnedIDs))
		for _, r := range rs[:min(len(rs), maxWarnedIDs)] {
			ids = append(ids, fmt.Sprintf("%s (%s: %s)", wire.FormatCANID(r.Channel.ID), r.Reason, r.Reason.Why()))
		}
		more := ""
		if len(rs) > maxWarnedIDs {
			more = fmt.Sprintf(" and %d more", len(rs)-maxWarnedIDs)
		}
		c.warnf("%s: %d candidate ISO-TP channel(s) rejected as not diagnostic, their frames not shown as UDS: %s%s; uds_services lists them, can_frames shows their frames",
			port, len(rs), strings.Join(ids, ", "), more)
	}
	if held > 0 {
		c.warnf("%s: %d transaction(s) held back until their id is seen in an answered exchange with another id", port, held)
	}
}

// udsTraceRow is one transaction with its port: a request and its
// answers, or an answer whose request was not seen.
type udsTraceRow struct {
	Port string `json:"port"`
	// ID is the request's first frame number (the answer's, for an
	// unmatched answer): unique per port, stable across reads.
	ID     uint64 `json:"id"`
	Status string `json:"status"`
	// SID is the request's service id (the one answered, for an answer).
	SID             string `json:"sid"`
	Service         string `json:"service"` // "" when the reference table has no name
	SubFunction     *int   `json:"sub_function"`
	SubFunctionName string `json:"sub_function_name,omitempty"`
	// SuppressPositive is the sub-function's bit 7: no positive answer wanted.
	SuppressPositive bool           `json:"suppress_positive_response"`
	DID              string         `json:"did,omitempty" jsonschema:"hex: the DID (0x22, 0x2E, 0x24, 0x2F), routine (0x31), report type (0x19), DTC group (0x14), local identifier or PID; the first when a request names several"`
	DIDs             []string       `json:"dids,omitempty" jsonschema:"every DID of a request that names several (at most 16)"`
	DIDsDropped      int            `json:"dids_dropped,omitempty" jsonschema:"DIDs of the request past the 16 listed"`
	DIDName          string         `json:"did_name,omitempty"`
	DIDKind          string         `json:"did_kind,omitempty"`
	Request          *udsMessageRow `json:"request"`
	Responses        []udsAnswerRow `json:"responses"`
	Dropped          int            `json:"responses_dropped"` // beyond isotp.MaxResponses
	Pending          int            `json:"pending_answers"`
	ResponseMs       *float64       `json:"response_ms"` // request end → final answer start
	ResponseReason   string         `json:"response_ms_reason,omitempty"`
	NRC              string         `json:"nrc,omitempty"`
	NRCName          string         `json:"nrc_name,omitempty"`
	Session          *int           `json:"session,omitempty"`
	DataHex          string         `json:"data_hex,omitempty"`
	// Text is the answer's data as printable ASCII (a VIN, a part
	// number): the ECU wrote it, so it is fenced.
	Text     untrusted.Text `json:"data_text,omitempty"`
	DTCCount *int           `json:"dtc_count,omitempty"`
	DTCs     []udsDTCRow    `json:"dtcs,omitempty"`
	// Problem says what about the exchange did not follow the standard.
	Problem string `json:"problem,omitempty"`
}

func udsTraceRowOf(port string, t isotp.Transaction) udsTraceRow {
	r := udsTraceRow{Port: port, ID: t.ID, Status: t.Status, SID: isotp.Hex8(t.SID), Service: t.Service, SubFunction: t.SubFunction,
		SubFunctionName: t.SubFunctionName, SuppressPositive: t.SuppressPositive, DID: t.DID, DIDs: t.DIDs, DIDsDropped: t.DIDsDropped,
		DIDName: t.DIDName, DIDKind: t.DIDKind,
		Dropped: t.Dropped, Pending: t.Pending, ResponseMs: t.ResponseMs, ResponseReason: t.ResponseReason, NRC: t.NRC, NRCName: t.NRCName,
		Session: t.Session, DataHex: t.DataHex, Text: untrusted.Text(t.Text), DTCCount: t.DTCCount, DTCs: mapRows(t.DTCs, udsDTCRowOf), Problem: t.Problem}
	r.Request = rowOrNil(t.Request, udsMessageRowOf)
	r.Responses = mapRows(t.Responses, udsAnswerRowOf)
	return r
}

// udsMessageRow is one side of an exchange as it crossed the bus.
type udsMessageRow struct {
	// Seq is the frame number of the message's first frame.
	Seq        uint64    `json:"seq"`
	Time       time.Time `json:"time"` // first frame
	End        time.Time `json:"end"`  // last frame
	CANID      string    `json:"can_id"`
	Addressing string    `json:"addressing"`
	// Source and Target are the addresses in a normal-fixed id; Target is
	// N_TA under extended addressing. Null where the format has none.
	Source     *int        `json:"source_address"`
	Target     *int        `json:"target_address"`
	Functional bool        `json:"functional"`
	Frames     int         `json:"frames"`
	Length     int         `json:"length"`
	Data       string      `json:"data"` // hex, at most isotp.MaxShownBytes
	Truncated  bool        `json:"data_truncated"`
	Notes      udsNotesRow `json:"flow_control_notes"`
}

func udsMessageRowOf(m isotp.Message) udsMessageRow {
	return udsMessageRow{Seq: m.Seq, Time: m.Time, End: m.End, CANID: m.CANID, Addressing: m.Addressing, Source: m.Source, Target: m.Target,
		Functional: m.Functional, Frames: m.Frames, Length: m.Length, Data: m.Data, Truncated: m.Truncated, Notes: udsNotesRow(m.Notes)}
}

// udsAnswerRow is one response to a request.
type udsAnswerRow struct {
	udsMessageRow
	Positive bool `json:"positive"`
	// Pending is NRC 0x78: the ECU asks for more time.
	Pending bool   `json:"pending"`
	NRC     string `json:"nrc,omitempty"`
	NRCName string `json:"nrc_name,omitempty"`
	// AfterMs is the time from the request's last frame to this answer's
	// first, in milliseconds; null for an answer with no request.
	AfterMs *float64 `json:"after_request_ms"`
}

func udsAnswerRowOf(a isotp.Answer) udsAnswerRow {
	return udsAnswerRow{udsMessageRow: udsMessageRowOf(a.Message), Positive: a.Positive, Pending: a.Pending, NRC: a.NRC, NRCName: a.NRCName, AfterMs: a.AfterMs}
}

// udsNotesRow counts the flow-control rules a sender broke.
type udsNotesRow struct {
	// BeforeFlowControl: consecutive frames sent before any flow control.
	BeforeFlowControl int `json:"cf_before_flow_control,omitempty"`
	// BlockExceeded: consecutive frames beyond the block size granted.
	BlockExceeded int `json:"block_size_exceeded,omitempty"`
	// STmin: consecutive frames closer than the separation time granted.
	STmin int `json:"stmin_violations,omitempty"`
	// Waits: flow control frames with status WAIT.
	Waits int `json:"flow_waits,omitempty"`
}

// udsDTCRow is one UDS trouble code with its status byte: in a traced
// answer (uds_trace) and in one this box asked for (uds_request).
type udsDTCRow struct {
	Code   string `json:"code"`   // 3 bytes hex
	Status string `json:"status"` // status byte hex
}

func udsDTCRowOf(d isotp.DTC) udsDTCRow { return udsDTCRow(d) }

// udsIDs parses the id arguments the way can_frames spells ids.
func udsIDs(arg string, ids []canIDArg) ([]uint32, error) {
	if len(ids) > isotp.MaxSelected {
		return nil, argErr(arg, "name fewer ids", "%d ids; at most %d", len(ids), isotp.MaxSelected)
	}
	out := make([]uint32, 0, len(ids))
	for _, s := range ids {
		v := hexValue(string(s))
		if len(s) > 3 {
			v |= wire.CANEFF
		}
		out = append(out, v)
	}
	return out, nil
}

// udsKey orders transactions by port, then by request frame.
func udsKey(index map[string]uint64) func(udsTraceRow) rowKey {
	return func(r udsTraceRow) rowKey { return rowKey{index[r.Port], r.ID} }
}

// canPortIndex is each CAN port's place among the CAN store's ports.
func canPortIndex(d Deps) map[string]uint64 {
	index := map[string]uint64{}
	for i, p := range d.CAN.Ports() {
		index[p.Name()] = uint64(i)
	}
	return index
}

// udsInWindow: a transaction is in a window by its request's time, or
// its first answer's when the request was not seen.
func udsInWindow(t *isotp.Transaction, sp span) bool {
	switch {
	case t.Request != nil:
		return sp.holds(t.Request.Time)
	case len(t.Responses) > 0:
		return sp.holds(t.Responses[0].Time)
	}
	return true
}

var udsTraceTool = tool[udsTraceIn, page[udsTraceRow]]{
	name:  "uds_trace",
	reads: readsUDS,
	desc: "UDS, KWP2000 and OBD-II exchanges overheard on the CAN ports (passive ISO-TP on 11- and 29-bit ids), by port then request frame: service, sub-function, did (DID, routine, report type or DTC group) and their names, every answer with its time, response_ms, NRC and its name, status. SIDs, NRCs and DIDs are hex strings (0x22, 0x31, 0xF190). " +
		"ECU text answers are fenced. Ids that take part in no answered exchange with another id are not diagnostic and not shown (a warning names them). from=frames re-traces the stored frames with other ids or extended addressing. Paged.",
	hints: readOnly(),
	ids:   []string{"port", "id"},
	text:  []textSource{textUDS},
	run: func(c *call, in udsTraceIn) (page[udsTraceRow], error) {
		ps, err := canPorts(c.d, in.PortSelector)
		if err != nil {
			return page[udsTraceRow]{}, err
		}
		sp, err := in.span()
		if err != nil {
			return page[udsTraceRow]{}, err
		}
		sid, did := udsHex(string(in.SID)), udsHex(string(in.DID))
		if sid > 0xFF {
			return page[udsTraceRow]{}, argErr("sid", "name a one-byte service id such as 0x22", "%s is more than one byte", in.SID)
		}
		keep := func(t *isotp.Transaction) bool {
			return (in.Status == "" || t.Status == string(in.Status)) && (in.SID == "" || uint32(t.SID) == sid) &&
				(in.DID == "" || udsHasDID(t, did)) && udsInWindow(t, sp)
		}
		chosen := map[string]bool{}
		for _, p := range ps {
			chosen[p.Name()] = true
		}
		var rows []udsTraceRow
		if in.From == udsFromFrames {
			if rows, err = udsFramesTrace(c, ps, sp, in, keep); err != nil {
				return page[udsTraceRow]{}, err
			}
		} else {
			if len(in.IDs) > 0 || len(in.Extended) > 0 {
				return page[udsTraceRow]{}, argErr("ids", "pass from=frames to choose ids or extended addressing", "ids and extended apply to from=frames only")
			}
			st := c.d.UDS.Status()
			if st.Kept.Evicted > 0 {
				c.warnf("the store evicted its %d oldest transactions; from=frames re-traces what the frame ring still holds", st.Kept.Evicted)
			}
			for _, p := range st.Ports {
				if chosen[p.Port] {
					udsWarnRejected(c, p.Port, p.Rejections, p.Held)
				}
			}
			c.d.UDS.Transactions().Range(0, func(_ uint64, r isotp.Record) bool {
				if chosen[r.Port] && keep(&r.Transaction) {
					rows = append(rows, udsTraceRowOf(r.Port, r.Transaction))
				}
				return true
			})
		}
		return pageSlice(c, in.Paging, rows, udsKey(canPortIndex(c.d)))
	},
}

// udsFramesTrace runs a fresh trace over each chosen port's frame ring.
func udsFramesTrace(c *call, ps []*canbus.Port, sp span, in udsTraceIn, keep func(*isotp.Transaction) bool) ([]udsTraceRow, error) {
	ids, err := udsIDs("ids", in.IDs)
	if err != nil {
		return nil, err
	}
	ext, err := udsIDs("extended", in.Extended)
	if err != nil {
		return nil, err
	}
	var rows []udsTraceRow
	for i, p := range ps {
		c.progress(float64(i), float64(len(ps)), "tracing "+p.Name())
		tr, err := isotp.TraceFrames(p.Name(), p.Frames(), isotp.Window{Since: sp.since, Until: sp.until}, isotp.Options{IDs: ids, Extended: ext})
		if err != nil {
			return nil, argErr("extended", "every extended id must also be among ids", "%v", err)
		}
		if tr.TransactionsTruncated {
			c.warnf("%s: the trace kept the first %d transactions of the window; narrow since/until for the rest", p.Name(), isotp.MaxTraceTransactions)
		}
		udsWarnRejected(c, p.Name(), tr.Rejections, 0)
		for _, t := range tr.Transactions {
			if keep(&t) {
				rows = append(rows, udsTraceRowOf(p.Name(), t))
			}
		}
	}
	return rows, nil
}

type udsServicesIn struct {
	Reference bool `json:"reference,omitempty" jsonschema:"also return the reference tables: every service with its sub-functions, the negative response codes and the standard DIDs (about 12 kB)"`
	PortSelector
}

// udsNRCCount is how often an ECU answered one service with one NRC.
type udsNRCCount struct {
	NRC   string `json:"nrc"`
	Name  string `json:"name"`
	Count int    `json:"count"`
}

// udsServiceTally is one service's exchanges with one ECU about one
// identifier.
type udsServiceTally struct {
	SID     string `json:"sid"`
	Service string `json:"service"`
	// DID is the identifier the exchanges name; a request naming several
	// DIDs is tallied under each.
	DID        string `json:"did,omitempty" jsonschema:"hex DID, routine, report type, DTC group or local identifier (as uds_trace); absent for services without one"`
	DIDName    string `json:"did_name,omitempty"`
	Requests   int    `json:"requests"`
	Positive   int    `json:"positive"`
	Negative   int    `json:"negative"`
	NoResponse int    `json:"no_response"`
	Suppressed int    `json:"suppressed"`
	Open       int    `json:"open_at_end"`
	Unmatched  int    `json:"unmatched_responses"`
	// ResponseMs is min/mean/max over the answered ones; null when none.
	ResponseMinMs  *float64      `json:"response_min_ms"`
	ResponseMeanMs *float64      `json:"response_mean_ms"`
	ResponseMaxMs  *float64      `json:"response_max_ms"`
	NRCs           []udsNRCCount `json:"nrcs"`
	timed          int           // answers with a response time, for the mean
}

// udsECU is one answering node: the CAN id it answers on (the request's
// id when nothing answered).
type udsECU struct {
	Port     string            `json:"port"`
	CANID    string            `json:"can_id"`
	Address  *int              `json:"source_address"` // normal fixed addressing only
	Tester   string            `json:"tester_can_id"`  // the id its requests came from; "" for unmatched answers
	Services []udsServiceTally `json:"services"`
}

type udsServicesOut struct {
	Ports []udsPortRow `json:"ports"`
	ECUs  []udsECU     `json:"ecus"`
	// Rejected are the channels on ISO-TP ids not taken for diagnostic
	// ones, at most maxRejectedRows; ports[].rejected_channels counts all.
	Rejected []udsRejectedRow   `json:"rejected_channels" jsonschema:"channels on ISO-TP ids that are not diagnostic (a broadcast on a 0x7xx id), whose frames are not tallied as UDS; at most 64, ports[].rejected_channels counts them all by reason"`
	Kept     int                `json:"transactions_kept"`
	Evicted  uint64             `json:"transactions_evicted"`
	Services []udsServiceRefRow `json:"services_reference"`
	NRCs     []udsNRCRefRow     `json:"nrcs_reference"`
	DIDs     []udsDIDRefRow     `json:"dids_reference"`
}

// udsPortRow is one CAN port's ISO-TP and UDS counters.
type udsPortRow struct {
	Port        string              `json:"port"`
	Frames      uint64              `json:"frames"` // every frame fed, the port's frame numbers run 0..frames-1
	Transport   udsTransportRow     `json:"transport"`
	UDS         udsTraceCountersRow `json:"uds"`
	Outstanding int                 `json:"requests_waiting"`
	// Held counts ended transactions held until their channel is seen in
	// an answered exchange.
	Held int `json:"transactions_held"`
	// RejectedChannels counts the channels not taken for diagnostic ones,
	// by reason; rejected_channels lists them.
	RejectedChannels map[string]uint64 `json:"rejected_channels"`
}

func udsPortRowOf(p isotp.PortStatus) udsPortRow {
	return udsPortRow{Port: p.Port, Frames: p.Frames, Transport: udsTransportRowOf(p.Transport), UDS: udsTraceCountersRow(p.UDS),
		Outstanding: p.Outstanding, Held: p.Held, RejectedChannels: p.RejectedChannels}
}

// udsTransportRow is the ISO-TP layer's counters.
type udsTransportRow struct {
	Frames      uint64 `json:"frames"` // selected frames read
	Single      uint64 `json:"single_frames"`
	First       uint64 `json:"first_frames"`
	Consecutive uint64 `json:"consecutive_frames"`
	FlowControl uint64 `json:"flow_control_frames"`
	PDUs        uint64 `json:"pdus"`
	// OrphanCF counts consecutive frames outside any transfer (after a
	// sequence error, or whose first frame was never seen).
	OrphanCF uint64 `json:"orphan_consecutive_frames"`
	// UnmatchedFC counts flow control that no waiting sender could take.
	UnmatchedFC uint64 `json:"unmatched_flow_control"`
	// BadPCI counts selected frames that are not ISO-TP.
	BadPCI uint64 `json:"not_isotp_frames"`
	// ChannelOverflow counts frames of a new channel refused at the
	// channel bound.
	ChannelOverflow uint64 `json:"channel_overflow"`
	// RejectedFrames counts frames of channels rejected as not ISO-TP or
	// as sending both ways: selected (counted in frames), not read.
	RejectedFrames uint64      `json:"rejected_channel_frames"`
	Notes          udsNotesRow `json:"flow_control_notes"`
	// IncompleteByReason counts ended transfers by reason.
	IncompleteByReason map[string]uint64 `json:"incomplete"`
}

func udsTransportRowOf(t isotp.TransportSummary) udsTransportRow {
	c := t.Counters
	return udsTransportRow{Frames: c.Frames, Single: c.Single, First: c.First, Consecutive: c.Consecutive, FlowControl: c.FlowControl, PDUs: c.PDUs,
		OrphanCF: c.OrphanCF, UnmatchedFC: c.UnmatchedFC, BadPCI: c.BadPCI, ChannelOverflow: c.ChannelOverflow, RejectedFrames: c.RejectedFrames,
		Notes: udsNotesRow(c.Notes), IncompleteByReason: t.IncompleteByReason}
}

// udsTraceCountersRow is a tracer's totals over the transactions of
// diagnostic channels; rejected_transactions counts the others.
type udsTraceCountersRow struct {
	Requests           uint64 `json:"requests"`
	Positive           uint64 `json:"positive"`
	Negative           uint64 `json:"negative"`
	NoResponse         uint64 `json:"no_response"`
	Suppressed         uint64 `json:"suppressed"`
	Open               uint64 `json:"open_at_end"`
	Unmatched          uint64 `json:"unmatched_responses"`
	PendingAnswers     uint64 `json:"pending_answers"`
	ResponsesDropped   uint64 `json:"responses_dropped"`
	OutstandingDropped uint64 `json:"outstanding_overflow"` // requests ended at isotp.MaxOutstanding
	Malformed          uint64 `json:"malformed"`            // empty, or a negative answer under 3 bytes
	// Rejected counts transactions not reported because their channel
	// was rejected (not ISO-TP, both ways, or unpaired).
	Rejected uint64 `json:"rejected_transactions"`
}

// udsServiceRefRow is one service of the reference table.
type udsServiceRefRow struct {
	SID      string `json:"sid"`
	Response string `json:"positive_response_sid"`
	Name     string `json:"name"`
	Standard string `json:"standard"`
	// SubFunction says whether the byte after the SID is a sub-function
	// (its bit 7 then suppresses the positive response).
	SubFunction  bool          `json:"sub_function"`
	SubFunctions []udsNamedRow `json:"sub_functions"`
	// Identifier names what the request's first parameter is ("DID",
	// "routine", "local identifier", "PID", …); "" when none is decoded.
	Identifier string `json:"identifier,omitempty"`
}

func udsServiceRefRowOf(s isotp.ServiceInfo) udsServiceRefRow {
	return udsServiceRefRow{SID: isotp.Hex8(s.SID), Response: isotp.Hex8(s.Response), Name: s.Name, Standard: s.Standard, SubFunction: s.SubFunction,
		SubFunctions: mapRows(s.SubFunctions, func(n isotp.Named) udsNamedRow { return udsNamedRow(n) }), Identifier: s.Identifier}
}

// udsNamedRow is a value with its name (a sub-function).
type udsNamedRow struct {
	Value uint8  `json:"value"`
	Name  string `json:"name"`
}

// udsNRCRefRow is one negative response code of the reference table.
type udsNRCRefRow struct {
	Code string `json:"code"`
	Name string `json:"name"`
}

// udsDIDRefRow is one standard DID of the reference table.
type udsDIDRefRow struct {
	DID  string `json:"did"`
	Name string `json:"name"`
}

// udsPeer is the ECU that answered a tester's id.
type udsPeer struct {
	canID string
	addr  *int
}

// udsECUOf names the ECU side of a transaction: the id that answered, or
// for an unanswered request the id that answered its tester before
// (peers), else the request's own id.
func udsECUOf(port string, t *isotp.Transaction, peers map[[2]string]udsPeer) (key [3]string, addr *int) {
	tester := ""
	if t.Request != nil {
		tester = t.Request.CANID
	}
	if len(t.Responses) > 0 {
		return [3]string{port, t.Responses[0].CANID, tester}, t.Responses[0].Source
	}
	if p, ok := peers[[2]string{port, tester}]; ok {
		return [3]string{port, p.canID, tester}, p.addr
	}
	if t.Request == nil {
		return [3]string{port, "", ""}, nil
	}
	return [3]string{port, tester, tester}, t.Request.Target
}

func (st *udsServiceTally) add(t *isotp.Transaction) {
	st.Requests += b2i(t.Request != nil)
	switch t.Status {
	case isotp.StatusPositive:
		st.Positive++
	case isotp.StatusNegative:
		st.Negative++
		i := slices.IndexFunc(st.NRCs, func(n udsNRCCount) bool { return n.NRC == t.NRC })
		if i < 0 {
			st.NRCs = append(st.NRCs, udsNRCCount{NRC: t.NRC, Name: t.NRCName})
			i = len(st.NRCs) - 1
		}
		st.NRCs[i].Count++
	case isotp.StatusNoResponse:
		st.NoResponse++
	case isotp.StatusSuppressed:
		st.Suppressed++
	case isotp.StatusOpen:
		st.Open++
	case isotp.StatusUnmatched:
		st.Unmatched++
	}
	if ms := t.ResponseMs; ms != nil {
		st.timed++
		if st.ResponseMinMs == nil {
			lo, hi, mean := *ms, *ms, *ms
			st.ResponseMinMs, st.ResponseMaxMs, st.ResponseMeanMs = &lo, &hi, &mean
			return
		}
		*st.ResponseMinMs, *st.ResponseMaxMs = min(*st.ResponseMinMs, *ms), max(*st.ResponseMaxMs, *ms)
		*st.ResponseMeanMs += (*ms - *st.ResponseMeanMs) / float64(st.timed)
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

var udsServicesTool = tool[udsServicesIn, udsServicesOut]{
	name:  "uds_services",
	reads: readsUDS,
	desc: "UDS summary of the live store: per port the ISO-TP counters (incomplete transfers by reason) and request outcomes; per ECU, service and DID (which DIDs a tester read on which ECU) the requests, positive, negative with each NRC named, no_response, suppressed and response times; the channels on ISO-TP ids rejected as not diagnostic, and why. " +
		"reference=true adds the service, NRC and DID name tables.",
	hints: readOnly(),
	run: func(c *call, in udsServicesIn) (udsServicesOut, error) {
		ps, err := canPorts(c.d, in.PortSelector)
		if err != nil {
			return udsServicesOut{}, err
		}
		chosen := map[string]bool{}
		for _, p := range ps {
			chosen[p.Name()] = true
		}
		st := c.d.UDS.Status()
		out := udsServicesOut{Ports: []udsPortRow{}, ECUs: []udsECU{}, Rejected: []udsRejectedRow{}, Evicted: st.Kept.Evicted,
			Services: []udsServiceRefRow{}, NRCs: []udsNRCRefRow{}, DIDs: []udsDIDRefRow{}}
		rejected := 0
		for _, p := range st.Ports {
			if !chosen[p.Port] {
				continue
			}
			out.Ports = append(out.Ports, udsPortRowOf(p))
			udsWarnRejected(c, p.Port, p.Rejections, p.Held)
			rejected += len(p.Rejections)
			for _, r := range p.Rejections {
				if len(out.Rejected) < maxRejectedRows {
					out.Rejected = append(out.Rejected, udsRejectedRowOf(p.Port, r))
				}
			}
		}
		if rejected > len(out.Rejected) {
			c.warnf("rejected_channels lists the first %d of %d rejected channels; ports[].rejected_channels counts them all by reason", len(out.Rejected), rejected)
		}
		snap := c.d.UDS.Transactions()
		peers := map[[2]string]udsPeer{}
		snap.Range(0, func(_ uint64, r isotp.Record) bool {
			if r.Request != nil && len(r.Responses) > 0 && !r.Request.Functional {
				peers[[2]string{r.Port, r.Request.CANID}] = udsPeer{r.Responses[0].CANID, r.Responses[0].Source}
			}
			return true
		})
		byECU := map[[3]string]*udsECU{}
		snap.Range(0, func(_ uint64, r isotp.Record) bool {
			if !chosen[r.Port] {
				return true
			}
			out.Kept++
			k, addr := udsECUOf(r.Port, &r.Transaction, peers)
			e := byECU[k]
			if e == nil {
				e = &udsECU{Port: k[0], CANID: k[1], Tester: k[2], Address: addr, Services: []udsServiceTally{}}
				byECU[k] = e
			}
			sid := isotp.Hex8(r.SID)
			dids := r.DIDs
			if dids == nil {
				dids = []string{r.DID}
			}
			for j, did := range dids {
				i := slices.IndexFunc(e.Services, func(s udsServiceTally) bool { return s.SID == sid && s.DID == did })
				if i < 0 {
					name := r.DIDName
					if j > 0 {
						name = isotp.DIDName(uint16(udsHex(did)))
					}
					e.Services = append(e.Services, udsServiceTally{SID: sid, Service: r.Service, DID: did, DIDName: name, NRCs: []udsNRCCount{}})
					i = len(e.Services) - 1
				}
				e.Services[i].add(&r.Transaction)
			}
			return true
		})
		index := canPortIndex(c.d)
		for _, e := range byECU {
			slices.SortFunc(e.Services, func(a, b udsServiceTally) int {
				return cmp.Or(cmp.Compare(a.SID, b.SID), cmp.Compare(len(a.DID), len(b.DID)), cmp.Compare(a.DID, b.DID))
			})
			out.ECUs = append(out.ECUs, *e)
		}
		slices.SortFunc(out.ECUs, func(a, b udsECU) int {
			return cmp.Or(cmp.Compare(index[a.Port], index[b.Port]), cmp.Compare(a.CANID, b.CANID), cmp.Compare(a.Tester, b.Tester))
		})
		if st.Kept.Evicted > 0 {
			c.warnf("the tallies cover the %d transactions kept; %d older ones were evicted by the store's bound", out.Kept, st.Kept.Evicted)
		}
		if in.Reference {
			out.Services = mapRows(isotp.Services(), udsServiceRefRowOf)
			out.NRCs = mapRows(isotp.NRCs(), func(n isotp.NRCInfo) udsNRCRefRow { return udsNRCRefRow{Code: isotp.Hex8(n.Code), Name: n.Name} })
			out.DIDs = mapRows(isotp.DIDs(), func(d isotp.DIDInfo) udsDIDRefRow {
				return udsDIDRefRow{DID: fmt.Sprintf("0x%04X", d.DID), Name: d.Name}
			})
		}
		return out, nil
	},
}
