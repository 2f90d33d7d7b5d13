package transmit

import (
	"context"
	"os"
	"strings"
)

// ArmSwitch is the board's transmit-arm input: a key switch on a GPIO line
// on hardware, a file on the simulated board. Armed must be cheap; the
// service reads it before every frame.
type ArmSwitch interface {
	Armed() bool
}

// Mode is a CAN port's controller mode.
type Mode string

// Modes. A port is listen-only (no ACK, no error frames) unless a plan is
// running while armed.
const (
	ModeListenOnly Mode = "listen-only"
	ModeActive     Mode = "active"
)

// ModeSetter switches a port's controller mode: candevice on SocketCAN,
// L/O on slcan.
type ModeSetter interface {
	SetMode(ctx context.Context, m Mode) error
}

// FileArm is the simulated board's arm input: armed while the file exists
// and its first word is "armed" (or "1"). Anything else, or an unreadable
// file, is disarmed: a fault never arms.
type FileArm struct{ Path string }

// Armed reads the file.
func (a FileArm) Armed() bool {
	if a.Path == "" {
		return false
	}
	b, err := os.ReadFile(a.Path)
	if err != nil {
		return false
	}
	w := strings.Fields(string(b))
	return len(w) > 0 && (w[0] == "armed" || w[0] == "1")
}

// neverArmed is the switch of a board without one.
type neverArmed struct{}

func (neverArmed) Armed() bool { return false }

var _ ArmSwitch = FileArm{}
