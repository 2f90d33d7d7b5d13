package ports

import "sync"

// Bring-up outcomes, after periph's driver.Init: loaded, skipped as
// irrelevant, or failed.
const (
	OutcomeUp      = "up"
	OutcomeSkipped = "skipped"
	OutcomeFailed  = "failed"
)

// Where the transmit-arm input comes from.
const (
	ArmInputGPIO = "gpio" // a key switch on a GPIO line
	ArmInputFile = "file" // the simulated board's arm file
	ArmInputNone = "none" // no input: transmit is never armed
)

// BoardPart is one part of the board's bring-up (the SPAN interface, the
// USB gadget, the GPIO lines) as capture_status reports it.
type BoardPart struct {
	Part    string // "span IF", "gadget IF", "gpio"
	Outcome string // OutcomeUp, OutcomeSkipped or OutcomeFailed
	Detail  string // what was done, or why it was skipped or failed
}

// Arm is the transmit-arm input as capture_status reports it, and a
// document: the status page's status.json holds it as key_switch. On is
// read from the input at the call, the same read the transmit gatekeeper
// makes.
type Arm struct {
	On      bool   `json:"on"`
	Input   string `json:"input"`   // ArmInputGPIO, ArmInputFile or ArmInputNone
	Where   string `json:"where"`   // the GPIO line (CHIP:OFFSET) or the file; for none, why there is no input
	Changes uint64 `json:"changes"` // on/off transitions seen since start (GPIO only)
}

// board is the Registry's board half: parts in bring-up order and the
// arm input's status function.
type board struct {
	mu    sync.RWMutex
	parts []BoardPart
	arm   func() Arm
}

// AddBoardPart records one bring-up outcome.
func (r *Registry) AddBoardPart(p BoardPart) {
	r.board.mu.Lock()
	r.board.parts = append(r.board.parts, p)
	r.board.mu.Unlock()
}

// SetArm registers the arm input's status function.
func (r *Registry) SetArm(status func() Arm) {
	r.board.mu.Lock()
	r.board.arm = status
	r.board.mu.Unlock()
}

// BoardParts returns the bring-up outcomes in the order they happened;
// empty, never nil, before any.
func (r *Registry) BoardParts() []BoardPart {
	r.board.mu.RLock()
	defer r.board.mu.RUnlock()
	return append([]BoardPart{}, r.board.parts...)
}

// Arm returns the arm input's status; without a registered input it is
// off, input none.
func (r *Registry) Arm() Arm {
	r.board.mu.RLock()
	fn := r.board.arm
	r.board.mu.RUnlock()
	if fn == nil {
		return Arm{Input: ArmInputNone, Where: "no arm input registered"}
	}
	return fn()
}
