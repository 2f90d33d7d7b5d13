package board

import "fmt"

// State is how bringing up one part of the board went, after periph's
// driver.Init: loaded, skipped as irrelevant, or failed.
type State string

const (
	Up      State = "up"
	Skipped State = "skipped"
	Failed  State = "failed"
)

// Outcome reports one part of bring-up: a port, the GPIO lines, the gadget.
type Outcome struct {
	Part   string
	State  State
	Reason string // why it was skipped or failed, or what was done
}

func up(part, what string) Outcome { return Outcome{Part: part, State: Up, Reason: what} }
func skipped(part, why string) Outcome {
	return Outcome{Part: part, State: Skipped, Reason: why}
}
func failed(part string, err error) Outcome {
	return Outcome{Part: part, State: Failed, Reason: err.Error()}
}

func (o Outcome) String() string { return fmt.Sprintf("%s %s: %s", o.Part, o.State, o.Reason) }
