package mcp

import (
	"fmt"
	"time"

	"fieldtap/drivers/wire"
	"fieldtap/mcp/untrusted"
	"fieldtap/services/isotp"
	"fieldtap/services/j1939"
	"fieldtap/services/transmit"
)

// The rows of the transmit bundle: a plan as a client reads it, and what
// came back after a send. transmit.Frame's JSON names (id, extended, dlc,
// data, delay_us, on_flow_control) are kept, so a plan saved from an
// answer is still a plan file for fieldtap plan show/run.

// planFrameRow is one frame of a plan. Gaps and offsets are distinct
// fields: delay_us is the wait after the previous frame, offset_us the
// time from the plan's start.
type planFrameRow struct {
	ID       *string `json:"id" jsonschema:"hex CAN id (8 digits 29-bit, 3 digits 11-bit); null for a J1708 message, which has none"`
	Extended bool    `json:"extended"`
	DLC      int     `json:"dlc" jsonschema:"data bytes (for J1708 the whole message with MID and checksum)"`
	Data     string  `json:"data" jsonschema:"hex bytes exactly as sent"`
	Delay    int64   `json:"delay_us" jsonschema:"gap: microseconds to wait after the previous frame (or the plan's start) before this one"`
	// Offset is null from the first frame that waits for the ECU's flow
	// control on: when it goes out depends on the ECU.
	Offset        *int64 `json:"offset_us" jsonschema:"offset: microseconds from the plan's start to this frame; null once a frame waits for the ECU's flow control"`
	OnFlowControl bool   `json:"on_flow_control" jsonschema:"sent only after the ECU's ISO-TP flow control, never blindly"`
}

// listenRow is the answer a plan listens for after its frames.
type listenRow struct {
	Kind string `json:"kind" jsonschema:"j1939 or uds"`
	PGN  *int   `json:"pgn" jsonschema:"j1939: the PGN listened for (direct, by BAM, or its NACK); null for uds"`
	// SA is null for a global request (any ECU answers) and for uds.
	SA         *int    `json:"sa" jsonschema:"j1939: the only source address whose answer counts; null when any ECU may answer (a global request) and for uds"`
	ResponseID *string `json:"response_id" jsonschema:"uds: the hex CAN id the answer comes on; null for j1939"`
	// FlowControl is the frame this box sends after the ECU's First Frame.
	FlowControl *string `json:"flow_control" jsonschema:"uds: hex data of the flow-control frame this box sends after the ECU's first frame; null for j1939"`
	TimeoutMS   int64   `json:"timeout_ms" jsonschema:"how long the plan listens after its last frame"`
}

// planRow is a stored plan as a client reads it.
type planRow struct {
	PlanID        string         `json:"plan_id"`
	Port          string         `json:"port"`
	Medium        string         `json:"medium" jsonschema:"can or j1708"`
	Tool          string         `json:"tool"`
	Summary       string         `json:"summary"`
	Risk          string         `json:"risk" jsonschema:"read, actuate or erase"`
	Frames        []planFrameRow `json:"frames"`
	Count         int            `json:"count"`
	Duration      int64          `json:"duration_us" jsonschema:"sum of the gaps, microseconds; flow-control waits come on top"`
	AddedLoad     *float64       `json:"estimated_added_bus_load" jsonschema:"fraction of the bus over max(duration, 1 s); null when the bitrate is unknown, as the basis says"`
	LoadBasis     string         `json:"estimated_added_bus_load_basis"`
	Preconditions []string       `json:"preconditions"`
	CannotKnow    []string       `json:"cannot_know"`
	ListensFor    *listenRow     `json:"listens_for" jsonschema:"the answer the plan collects; null when it listens for none"`
	BusCheck      busCheckRow    `json:"bus_check"`
	SHA256        string         `json:"sha256" jsonschema:"fingerprint of port and frames"`
	Created       time.Time      `json:"created"`
	Expires       time.Time      `json:"expires"`
	Executed      bool           `json:"executed"`
	// Ended says why a plan will never run although it did not expire.
	Ended string `json:"ended,omitempty" jsonschema:"declined, cancelled, no_answer or voided: why the plan will never run"`
	// ButtonCode is the status LED's blink pattern while this plan waits
	// for the board's confirm button.
	ButtonCode string `json:"button_code,omitempty" jsonschema:"the blink pattern the status LED shows while the plan waits for the confirm button"`
	Text       string `json:"text" jsonschema:"the plan for a person, byte for byte, as the confirmation question shows it"`
}

func planRowOf(p *transmit.Plan) planRow {
	r := planRow{PlanID: p.ID, Port: p.Port, Medium: string(p.Medium), Tool: p.Tool, Summary: p.Summary, Risk: string(p.Risk),
		Frames: make([]planFrameRow, len(p.Frames)), Count: p.Count, Duration: p.DurationMicro, AddedLoad: p.AddedLoad, LoadBasis: p.LoadBasis,
		Preconditions: nonNil(p.Preconditions), CannotKnow: nonNil(p.Unknowns), SHA256: p.Hash, Created: p.Created, Expires: p.Expires,
		Executed: p.Executed, Ended: p.Ended, ButtonCode: p.ButtonCode, Text: p.Text(), BusCheck: busCheckRowOf(p.Bus)}
	var at time.Duration
	known := true
	for i, f := range p.Frames {
		fr := planFrameRow{Extended: f.ID&wire.CANEFF != 0, DLC: len(f.Data), Data: fmt.Sprintf("%X", f.Data),
			Delay: f.Delay.Microseconds(), OnFlowControl: f.OnFlowControl}
		if id := f.IDHex(); id != "" {
			fr.ID = &id
		}
		at += f.Delay
		known = known && !f.OnFlowControl
		if known {
			us := at.Microseconds()
			fr.Offset = &us
		}
		r.Frames[i] = fr
	}
	if e := p.ListensFor(); e != nil {
		r.ListensFor = listenRowOf(e)
	}
	return r
}

// busCheckRow is what the plan's frames would meet on the bus, from the
// box's record of the last minute; transmit_execute checks again.
type busCheckRow struct {
	Checked      bool           `json:"checked" jsonschema:"false when the box keeps no record of this bus; reason says why"`
	Reason       string         `json:"reason,omitempty"`
	Since        time.Time      `json:"since" jsonschema:"start of the record read"`
	Conflicts    []conflictRow  `json:"conflicts" jsonschema:"another node on the plan's id or source address; any blocks execution without override_conflict"`
	LoadNow      *float64       `json:"bus_load_now" jsonschema:"measured over the last second; null when unknown"`
	LoadWithPlan *float64       `json:"bus_load_with_plan" jsonschema:"bus_load_now plus the plan's estimated added load"`
	LastAnswer   *lastAnswerRow `json:"last_answer" jsonschema:"the target's last recorded answer to the same request; null when none"`
}

type conflictRow struct {
	Kind     string     `json:"kind" jsonschema:"id_in_use, source_address_in_use or source_address_claimed"`
	ID       *string    `json:"id" jsonschema:"hex CAN id, for id_in_use"`
	SA       *string    `json:"sa" jsonschema:"hex J1939 source address"`
	Frames   int        `json:"frames" jsonschema:"frames another node sent on it in the record read"`
	LastSeen *time.Time `json:"last_seen"`
	Claimant *string    `json:"claimant" jsonschema:"the node whose address claim holds sa"`
	Message  string     `json:"message"`
}

type lastAnswerRow struct {
	Time    time.Time `json:"time"`
	Summary string    `json:"summary"`
}

func busCheckRowOf(b transmit.BusCheck) busCheckRow {
	r := busCheckRow{Checked: b.Checked, Reason: b.Reason, Since: b.Since, LoadNow: b.LoadNow, LoadWithPlan: b.LoadWithPlan,
		Conflicts: mapRows(b.Conflicts, func(c transmit.Conflict) conflictRow {
			return conflictRow{Kind: c.Kind, ID: optText(c.ID), SA: optText(c.SA), Frames: c.Frames, LastSeen: optTime(c.LastSeen),
				Claimant: optText(c.Claimant), Message: c.Message}
		})}
	if a := b.LastAnswer; a != nil {
		r.LastAnswer = &lastAnswerRow{Time: a.Time, Summary: a.Summary}
	}
	return r
}

// optText is s, or null when empty.
func optText(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func listenRowOf(e *transmit.Expect) *listenRow {
	l := &listenRow{Kind: e.Kind, TimeoutMS: e.Timeout.Milliseconds()}
	switch e.Kind {
	case transmit.ExpectJ1939:
		pgn := int(e.PGN)
		l.PGN = &pgn
		if e.From != j1939.AddrGlobal {
			sa := int(e.From)
			l.SA = &sa
		}
	case transmit.ExpectUDS:
		id := transmit.Frame{ID: e.ResponseID}.IDHex()
		fc := fmt.Sprintf("%X", e.FlowControl)
		l.ResponseID, l.FlowControl = &id, &fc
	}
	return l
}

// answerRow is one ECU reply to a sent plan. Text is what the ECU wrote,
// fenced; the hex is the truth.
type answerRow struct {
	Time time.Time `json:"time"`
	From string    `json:"from" jsonschema:"who answered: a J1939 source address (2 hex digits) or a UDS response CAN id"`
	PGN  *int      `json:"pgn" jsonschema:"the J1939 PGN answered (59392 for an Acknowledgment); null for uds"`
	Via  string    `json:"via" jsonschema:"direct, tp-BAM, tp-RTS or isotp"`
	Data string    `json:"data" jsonschema:"the answer's bytes in hex"`
	// Text is the answer as printable ASCII when every byte is (a VIN,
	// a UDS ASCII identifier); absent otherwise.
	Text untrusted.Text `json:"text,omitempty"`
	NACK bool           `json:"nack" jsonschema:"a J1939 negative acknowledgement of the request"`
	UDS  *udsRow        `json:"uds" jsonschema:"the decoded UDS answer; null for j1939"`
}

// udsRow is isotp.Response without its text, which the answer's fenced
// text carries.
type udsRow struct {
	Positive         bool        `json:"positive"`
	Service          string      `json:"service"`
	Pending          bool        `json:"pending" jsonschema:"NRC 0x78: the ECU answers later"`
	NRC              string      `json:"nrc,omitempty" jsonschema:"hex code of a negative response"`
	NRCName          string      `json:"nrc_name,omitempty"`
	Raw              string      `json:"raw" jsonschema:"the whole answer in hex"`
	Session          *int        `json:"session,omitempty"`
	P2Millis         *int        `json:"p2_ms,omitempty"`
	P2StarMillis     *int        `json:"p2_star_ms,omitempty"`
	DID              string      `json:"did,omitempty"`
	Data             string      `json:"data,omitempty" jsonschema:"a read DID's data in hex"`
	AvailabilityMask string      `json:"dtc_availability_mask,omitempty"`
	DTCCount         *int        `json:"dtc_count,omitempty"`
	DTCs             []udsDTCRow `json:"dtcs,omitempty"`
	Problem          string      `json:"problem,omitempty" jsonschema:"why a positive answer could not be fully decoded"`
}

func udsRowOf(r *isotp.Response) *udsRow {
	return &udsRow{Positive: r.Positive, Service: r.Service, Pending: r.Pending, NRC: r.NRC, NRCName: r.NRCName, Raw: r.Raw,
		Session: r.Session, P2Millis: r.P2Millis, P2StarMillis: r.P2StarMs, DID: r.DID, Data: r.DataHex,
		AvailabilityMask: r.AvailabilityMask, DTCCount: r.DTCCount, DTCs: mapRows(r.DTCs, udsDTCRowOf), Problem: r.Problem}
}

func answerRows(as []transmit.Answer) []answerRow {
	rows := make([]answerRow, 0, len(as))
	for _, a := range as {
		r := answerRow{Time: a.Time, From: a.From, Via: a.Via, Data: a.Data, Text: untrusted.Text(a.Text), NACK: a.NACK}
		if a.UDS != nil {
			r.UDS = udsRowOf(a.UDS)
		} else {
			pgn := int(a.PGN)
			r.PGN = &pgn
		}
		rows = append(rows, r)
	}
	return rows
}

// nextCall is the call that sends exactly a planned plan.
type nextCall struct {
	Tool      string    `json:"tool"`
	Arguments nextArgs  `json:"arguments"`
	Before    time.Time `json:"before" jsonschema:"the plan expires then"`
}

type nextArgs struct {
	PlanID    string `json:"plan_id"`
	AckActive bool   `json:"ack_active"`
}

// uncertainRow is the frame an uncertain run stopped at.
type uncertainRow struct {
	Frame       int      `json:"frame" jsonschema:"1-based place in the plan of the frame that may have gone out; the frames before it were sent, those after it were not"`
	Reason      string   `json:"reason" jsonschema:"why the writer could not confirm it"`
	LateReply   *string  `json:"late_reply" jsonschema:"what the adapter answered after the box stopped waiting: ack (it took the frame: it most likely went out), refused (BELL: it did not), none (nothing while the box listened); null when the writer cannot tell (J1708)"`
	LateReplyMs *float64 `json:"late_reply_after_ms" jsonschema:"when that answer came, in ms after the frame was handed to the writer; null when none came"`
}

func uncertainRowOf(u *transmit.Uncertain) *uncertainRow {
	r := &uncertainRow{Frame: u.Frame, Reason: u.Reason, LateReplyMs: u.LateMs()}
	if u.LateReply != "" {
		late := u.LateReply
		r.LateReply = &late
	}
	return r
}

// txOut is the answer of every transmitting tool: the plan, and after a
// send what went out and what came back.
type txOut struct {
	Status string   `json:"status" jsonschema:"planned (a dry run: nothing was sent), sent, or uncertain (the run stopped at a frame the writer could not confirm, which may have gone out: see uncertain)"`
	Plan   *planRow `json:"plan" jsonschema:"the plan; null only if it expired while it ran"`
	// Next is how to send this plan; null once sent, or when the port
	// cannot send (next_reason says why).
	Next       *nextCall `json:"next"`
	NextReason string    `json:"next_reason,omitempty"`
	// Blockers are the gates that would refuse this plan now.
	Blockers []blockerRow `json:"blockers"`
	Sent     int          `json:"frames_sent" jsonschema:"frames the writer confirmed"`
	// Uncertain is set when status is uncertain.
	Uncertain *uncertainRow `json:"uncertain" jsonschema:"the frame an uncertain run stopped at, and what the adapter answered later; null unless status is uncertain"`
	Answers   []answerRow   `json:"answers"`
	// Scan is a run uds_scan's tally; absent for every other plan.
	Scan []scanRow `json:"scan,omitempty" jsonschema:"uds_scan: each request run, in order, with its outcome"`
}

// blockerRow is a gate that would refuse a plan now, or refuses a port
// any plan.
type blockerRow struct {
	Gate    string `json:"gate"`
	Code    string `json:"code,omitempty"`
	Message string `json:"message"`
	Hint    string `json:"hint"`
}

func blockerRowOf(b transmit.Blocker) blockerRow { return blockerRow(b) }

// transmitStatusOut is transmit_status's answer: the transmitter, each
// port, and the caller's own plans, questions and recent runs.
type transmitStatusOut struct {
	Armed         bool               `json:"armed"`
	BundleLoaded  bool               `json:"bundle_loaded"`
	LoadCeiling   float64            `json:"bus_load_ceiling"`
	PlanTTLSecs   float64            `json:"plan_ttl_s"`
	Plans         int                `json:"plans_stored"`
	YourPlans     int                `json:"plans_yours"`
	PlansEvicted  uint64             `json:"plans_evicted"`
	PlansExpired  uint64             `json:"plans_expired"`
	PlansRefused  uint64             `json:"plans_refused_by_bound"`
	AuditFailures uint64             `json:"audit_failures"`
	Button        txButtonRow        `json:"confirm_button"`
	Confirmations txConfirmationsRow `json:"confirmations"`
	// PreviousRun is what start-up found and did; null before it ran.
	PreviousRun *txPreviousRunRow `json:"previous_run"`
	Ports       []txPortRow       `json:"ports"`
	// Recent is the caller's own recent transmissions and refusals.
	Recent []txRecentRow `json:"recent"`
}

func transmitStatusOutOf(st transmit.Status) transmitStatusOut {
	out := transmitStatusOut{Armed: st.Armed, BundleLoaded: st.BundleLoaded, LoadCeiling: st.LoadCeiling, PlanTTLSecs: st.PlanTTLSecs,
		Plans: st.Plans, YourPlans: st.YourPlans, PlansEvicted: st.PlansEvicted, PlansExpired: st.PlansExpired, PlansRefused: st.PlansRefused,
		AuditFailures: st.AuditFailures, Button: txButtonRowOf(st.Button), Confirmations: txConfirmationsRowOf(st.Confirmations),
		PreviousRun: rowOrNil(st.PreviousRun, txPreviousRunRowOf), Ports: mapRows(st.Ports, txPortRowOf), Recent: mapRows(st.Recent, txRecentRowOf)}
	return out
}

// txButtonRow is the board's confirm button as the transmitter uses it.
type txButtonRow struct {
	Required bool    `json:"required"`
	Present  bool    `json:"present"`
	WaitSecs float64 `json:"wait_s"`
	// Waiting is the plan waiting for a press now, or null.
	Waiting *txButtonWaitingRow `json:"waiting"`
}

func txButtonRowOf(b transmit.ButtonStatus) txButtonRow {
	return txButtonRow{Required: b.Required, Present: b.Present, WaitSecs: b.WaitSecs, Waiting: rowOrNil(b.Waiting, txButtonWaitingRowOf)}
}

// txButtonWaitingRow is the plan waiting for a press of the button.
type txButtonWaitingRow struct {
	// PlanID is shown only to the plan's owner.
	PlanID string    `json:"plan_id,omitempty"`
	Code   string    `json:"code"`
	Since  time.Time `json:"since"`
	Until  time.Time `json:"until"`
}

func txButtonWaitingRowOf(w transmit.ButtonWaiting) txButtonWaitingRow {
	return txButtonWaitingRow{PlanID: w.PlanID, Code: w.Code, Since: w.Since, Until: w.Until}
}

// txConfirmationsRow is the questions waiting for a person's answer.
type txConfirmationsRow struct {
	Waiting  int             `json:"waiting"`
	Yours    []txQuestionRow `json:"yours"`
	Expired  uint64          `json:"expired"`
	Refused  uint64          `json:"refused_by_bound"`
	TTLSecs  float64         `json:"ttl_s"`
	PerOwner int             `json:"max_per_session"`
}

func txConfirmationsRowOf(c transmit.ConfirmStatus) txConfirmationsRow {
	return txConfirmationsRow{Waiting: c.Waiting, Yours: mapRows(c.Yours, func(q transmit.Pending) txQuestionRow { return txQuestionRow(q) }),
		Expired: c.Expired, Refused: c.Refused, TTLSecs: c.TTLSecs, PerOwner: c.PerOwner}
}

// txQuestionRow is one of the caller's questions waiting for an answer.
type txQuestionRow struct {
	ID      string    `json:"confirmation_id"`
	PlanID  string    `json:"plan_id"`
	Tool    string    `json:"tool"`
	Asked   time.Time `json:"asked"`
	Expires time.Time `json:"expires"`
}

// txPreviousRunRow is what start-up found in the transmit audit and did.
type txPreviousRunRow struct {
	Interrupted []txInterruptedRow `json:"interrupted"`
	TornRecord  bool               `json:"torn_record"`
	// UnreadableLines and Partial say how far the tail can be trusted:
	// lines that were not records, and a window that began mid-file (a
	// plan sent before it is not seen).
	UnreadableLines int              `json:"unreadable_lines"`
	Partial         bool             `json:"partial"`
	PortsReset      []txPortResetRow `json:"ports_reset"`
}

func txPreviousRunRowOf(p transmit.PreviousRun) txPreviousRunRow {
	return txPreviousRunRow{Interrupted: mapRows(p.Interrupted, func(in transmit.Interrupted) txInterruptedRow { return txInterruptedRow(in) }),
		TornRecord: p.TornRecord, UnreadableLines: p.UnreadableLines, Partial: p.Partial, PortsReset: mapRows(p.PortsReset, txPortResetRowOf)}
}

// txInterruptedRow is a plan the previous run began sending and never
// finished.
type txInterruptedRow struct {
	PlanID string    `json:"plan_id"`
	Port   string    `json:"port"`
	Tool   string    `json:"tool"`
	Hash   string    `json:"sha256"`
	Began  time.Time `json:"began"`
	Frames int       `json:"frames"` // in the plan; how many went out is unknown
}

// txPortResetRow is what start-up did to one port.
type txPortResetRow struct {
	Port   string `json:"port"`
	Driver string `json:"driver"`
	Mode   string `json:"mode,omitempty"` // listen-only when it worked
	Error  string `json:"error,omitempty"`
}

func txPortResetRowOf(r transmit.PortReset) txPortResetRow {
	return txPortResetRow{Port: r.Port, Driver: r.Driver, Mode: string(r.Mode), Error: r.Error}
}

// txPortRow is one port as the transmitter sees it.
type txPortRow struct {
	Port     string    `json:"port"`
	Medium   string    `json:"medium"`
	Enabled  bool      `json:"enabled"` // [[port]] transmit = true
	Writer   bool      `json:"has_writer"`
	Armed    bool      `json:"armed"`
	Mode     string    `json:"mode"`
	Bitrate  int       `json:"bitrate"`
	Rate     txRateRow `json:"rate_limit"`
	Load     *float64  `json:"measured_bus_load"`
	LoadNote string    `json:"measured_bus_load_note,omitempty"`
	// CanSend is true when no gate of the box or the port would refuse a
	// plan that adds no load right now; cannot_send lists the ones that
	// would, in the order an execution checks them.
	CanSend    bool         `json:"can_send_now"`
	CannotSend []blockerRow `json:"cannot_send"`
}

func txPortRowOf(p transmit.PortStatus) txPortRow {
	return txPortRow{Port: p.Port, Medium: string(p.Medium), Enabled: p.Enabled, Writer: p.Writer, Armed: p.Armed, Mode: string(p.Mode),
		Bitrate: p.Bitrate, Rate: txRateRow{Plans: p.Rate.Plans, WindowSeconds: p.Rate.Window.Seconds()}, Load: p.Load, LoadNote: p.LoadNote,
		CanSend: p.CanSend, CannotSend: mapRows(p.CannotSend, blockerRowOf)}
}

// txRateRow is a port's rate limit: at most plans executions within any
// window_s seconds.
type txRateRow struct {
	Plans         int     `json:"plans"`
	WindowSeconds float64 `json:"window_s"`
}

// txRecentRow is one of the caller's recent transmissions or refusals.
type txRecentRow struct {
	Time   time.Time `json:"ts"`
	PlanID string    `json:"plan_id"`
	Port   string    `json:"port"`
	Tool   string    `json:"tool"`
	Event  string    `json:"event"`
	Gate   string    `json:"gate,omitempty"`
	Code   string    `json:"code,omitempty"`
	Sent   int       `json:"frames_sent"`
	// LateReply is an uncertain run's uncertain.late_reply.
	LateReply string `json:"late_reply,omitempty"`
}

func txRecentRowOf(r transmit.Recent) txRecentRow {
	return txRecentRow{Time: r.Time, PlanID: r.PlanID, Port: r.Port, Tool: r.Tool, Event: r.Event, Gate: r.Gate, Code: r.Code, Sent: r.Sent, LateReply: r.LateReply}
}
