package transmit

import "fmt"

// Stable codes. A Refusal names its gate and, where one gate has several
// reasons (the confirmation gate, the button gate), a code; an *Error
// carries a code for what is not a gate (a full plan store, an unknown
// confirmation to cancel). Codes never change meaning; messages are plain
// words for a person and may be reworded.
const (
	// Plan store.
	CodePlansFull     = "PLANS_FULL"       // the whole store is full of other callers' live plans
	CodeTokenFull     = "PLANS_TOKEN_FULL" // this token's sessions hold their quota of live plans
	CodeNoPlan        = "PLAN_NOT_FOUND"   // never made by this caller, expired, or evicted
	CodePlanRun       = "PLAN_ALREADY_RUN"
	CodePlanEnded     = "PLAN_ENDED" // declined, cancelled or voided: make a new dry run
	CodeNoSuchConfirm = "CONFIRMATION_NOT_FOUND"

	// Confirmation gate.
	CodeConfirmForged      = "CONFIRMATION_FORGED"      // the state was not issued by this box
	CodeConfirmMoved       = "CONFIRMATION_MOVED"       // issued for another tool, other arguments or another plan
	CodeConfirmOtherOwner  = "CONFIRMATION_OTHER_OWNER" // issued to another token or session
	CodeConfirmReplayed    = "CONFIRMATION_REPLAYED"    // already answered once
	CodeConfirmExpired     = "CONFIRMATION_EXPIRED"     // answered after its expiry
	CodeConfirmDeclined    = "CONFIRMATION_DECLINED"
	CodeConfirmCancelled   = "CONFIRMATION_CANCELLED"
	CodeConfirmNoAnswer    = "CONFIRMATION_NO_ANSWER"   // the call came back with the state and no answer
	CodeConfirmLimit       = "CONFIRMATION_LIMIT"       // too many unanswered confirmations waiting
	CodeConfirmUnavailable = "CONFIRMATION_UNAVAILABLE" // an actuate or erase plan and nobody can be asked

	// Button gate.
	CodeButtonAbsent  = "BUTTON_ABSENT"  // require_button is set and the board has no confirm button
	CodeButtonTimeout = "BUTTON_TIMEOUT" // nobody pressed it in time
	CodeButtonBusy    = "BUTTON_BUSY"    // another plan is waiting for the button
	CodeButtonFailed  = "BUTTON_FAILED"  // the button could not be read
)

// Error is a failure that is not a gate's refusal, with a stable code.
type Error struct {
	Code    string
	Message string
	Hint    string
}

func (e *Error) Error() string { return "transmit: " + e.Message }

func failure(code, hint, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...), Hint: hint}
}
