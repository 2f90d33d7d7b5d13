package transmit

import (
	"fmt"
	"slices"
)

// Hints make a refusal's hint name what opens the gate on the board the
// service runs on: a real board's key switch, confirm button and [[port]]
// tables, or the sim board's arm file, press file and sim_ports. The
// zero value is a real board.
type Hints struct {
	// SimPorts are the sim board's own ports, enabled for transmit by
	// [transmit] sim_ports since they have no [[port]] tables.
	SimPorts []string
	// ArmFile and ConfirmFile are the sim board's arm input and confirm
	// button ([transmit] arm_file, confirm_file); Sim says the board is
	// the sim board, so their absence is named.
	Sim         bool
	ArmFile     string
	ConfirmFile string
}

func (h Hints) enable(port string) string {
	if slices.Contains(h.SimPorts, port) {
		return "add it to [transmit] sim_ports (the sim board's CAN port can0 has a simulated writer) and restart"
	}
	return "set transmit = true in this port's [[port]] table and restart"
}

func (h Hints) arm() string {
	switch {
	case h.ArmFile != "":
		return fmt.Sprintf("arm the sim board: write \"armed\" into its arm file %s (echo armed > %s)", h.ArmFile, h.ArmFile)
	case h.Sim:
		return "set [transmit] arm_file and restart: the sim board's arm input is a file"
	}
	return "a person at the box turns the transmit-arm key switch on"
}

// press is how a person presses the confirm button on this board.
func (h Hints) press() string {
	if h.ConfirmFile != "" {
		return fmt.Sprintf("press the sim board's confirm button (`fieldtap button press --file %s`)", h.ConfirmFile)
	}
	return "press the confirm button"
}

func (h Hints) buttonAbsent() string {
	if h.Sim {
		return "set [transmit] confirm_file (the sim board's confirm button is a file), or turn transmit.require_button off"
	}
	return "name the board's confirm_input in its profile, or turn transmit.require_button off"
}

// askPerson is where a person can confirm a plan when the client cannot.
func (h Hints) askPerson() string {
	if h.Sim {
		// The simulated bus lives inside fieldtapd: a terminal at the
		// box has no path to it.
		return "use a client that supports elicitation, where a person confirms; on the sim board only fieldtapd reaches the simulated bus"
	}
	return "use a client that supports elicitation, or run the plan at the box with `fieldtap plan run`"
}
