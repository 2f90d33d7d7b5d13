package mcp

import (
	"fmt"
	"time"

	"fieldtap/drivers/wire"
	"fieldtap/services/isotp"
	"fieldtap/services/j1939"
	"fieldtap/services/transmit"
	"fieldtap/services/untrusted"
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
		Executed: p.Executed, Ended: p.Ended, ButtonCode: p.ButtonCode, Text: p.Text()}
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
		AvailabilityMask: r.AvailabilityMask, DTCCount: r.DTCCount, DTCs: udsDTCRows(r.DTCs), Problem: r.Problem}
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
	Blockers []transmit.Blocker `json:"blockers"`
	Sent     int                `json:"frames_sent" jsonschema:"frames the writer confirmed"`
	// Uncertain is set when status is uncertain.
	Uncertain *uncertainRow `json:"uncertain" jsonschema:"the frame an uncertain run stopped at, and what the adapter answered later; null unless status is uncertain"`
	Answers   []answerRow   `json:"answers"`
}
