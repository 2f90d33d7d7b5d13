package transmit

import "errors"

// Note is the transmit part of the MCP audit record of a call that reached
// the transmitter: the plan id, the SHA-256 of its port and frames, and
// the outcome, exactly as the transmit audit records them, so the two
// files tell one story about the call.
type Note struct {
	PlanID       string `json:"plan_id,omitempty"`
	FramesSHA256 string `json:"frames_sha256,omitempty"`
	// Outcome is one of the Outcome… values.
	Outcome string `json:"outcome"`
	Gate    string `json:"gate,omitempty"`
	Code    string `json:"code,omitempty"`
	Sent    int    `json:"frames_sent"`
}

// Note outcomes.
const (
	OutcomePlanned = "planned"            // a dry run: stored, nothing sent
	OutcomeAsked   = "needs_confirmation" // a question went to the client
	OutcomeSent    = "sent"
	OutcomeRefused = "refused" // nothing sent
	OutcomeStopped = "stopped" // Sent frames went out, then a gate stopped the rest
	// OutcomeUncertain: Sent frames went out, the next may have, and the
	// run stopped there.
	OutcomeUncertain = "uncertain"
	OutcomeFailed    = "failed" // an error that is not a gate's refusal
)

// PlannedNote is the note of a dry run that stored p.
func PlannedNote(p *Plan) Note {
	return Note{PlanID: p.ID, FramesSHA256: p.Hash, Outcome: OutcomePlanned}
}

// NoteOf is the note of an Execute call from what it returned.
func NoteOf(out *Outcome, err error) Note {
	var ref *Refusal
	switch {
	case errors.As(err, &ref):
		n := Note{PlanID: ref.PlanID, FramesSHA256: ref.FramesSHA256, Outcome: OutcomeRefused, Gate: ref.Gate, Code: ref.Code, Sent: ref.Sent}
		if ref.Sent > 0 || ref.Gate == GateWriter || ref.Gate == GateDisarmed {
			n.Outcome = OutcomeStopped
		}
		return n
	case err != nil:
		var e *Error
		n := Note{Outcome: OutcomeFailed}
		if errors.As(err, &e) {
			n.Code = e.Code
		}
		return n
	case out == nil:
		return Note{Outcome: OutcomeFailed}
	case out.Status == StatusNeedsConfirmation:
		return Note{PlanID: out.PlanID, FramesSHA256: out.FramesSHA256, Outcome: OutcomeAsked}
	case out.Status == StatusUncertain:
		return Note{PlanID: out.PlanID, FramesSHA256: out.FramesSHA256, Outcome: OutcomeUncertain, Sent: out.Sent}
	}
	return Note{PlanID: out.PlanID, FramesSHA256: out.FramesSHA256, Outcome: OutcomeSent, Sent: out.Sent}
}
