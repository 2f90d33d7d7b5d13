package transmit

import "fmt"

// Gate names: each refusal carries exactly one, and the audit log records it.
const (
	GateBundle       = "bundle"       // the MCP transmit bundle is not loaded
	GateScope        = "scope"        // the HTTP caller's token lacks the transmit scope
	GateAck          = "ack_active"   // ack_active was not true
	GatePortConfig   = "port_config"  // the port is not enabled for transmit in config, or has no writer
	GateArm          = "arm"          // the board's transmit-arm input is off
	GatePlan         = "plan"         // no such plan, expired, or already run
	GateRate         = "rate"         // the port's rate limit is spent
	GateBusLoad      = "bus_load"     // measured plus added load is above the ceiling
	GateBusConflict  = "bus_conflict" // another node uses the plan's id or source address, and no override reason was given
	GateConfirmation = "confirmation" // a person declined, cancelled, did not answer, or cannot be asked; or the answer is not valid for this call
	GateButton       = "button"       // transmit.require_button and nobody pressed the board's confirm button in time
	GateAudit        = "audit"        // the audit record could not be written
	GateWriter       = "writer"       // the writer failed mid-plan (frames before it were sent)
	GateDisarmed     = "arm_mid_plan" // the arm input went off mid-plan; the rest was not sent
)

// ScopeTransmit is the token scope an HTTP caller needs.
const ScopeTransmit = "transmit"

// Refusal is why nothing (or, for GateWriter and GateDisarmed, nothing
// more) was sent.
type Refusal struct {
	Gate string
	// Code says which reason, where a gate has several (the
	// confirmation and button gates); empty otherwise.
	Code    string
	Message string
	Hint    string
	// Sent counts frames that reached the writer before the refusal.
	Sent int
	// PlanID and FramesSHA256 name the plan refused, when there is one,
	// as the transmit audit records it (Note).
	PlanID       string
	FramesSHA256 string
}

func (r *Refusal) Error() string {
	return fmt.Sprintf("transmit refused by gate %s: %s", r.Gate, r.Message)
}

func refuse(gate, hint, format string, args ...any) *Refusal {
	return &Refusal{Gate: gate, Message: fmt.Sprintf(format, args...), Hint: hint}
}

func refuseCode(gate, code, hint, format string, args ...any) *Refusal {
	r := refuse(gate, hint, format, args...)
	r.Code = code
	return r
}
