package socketcan

import (
	"errors"
	"fmt"
	"time"
)

// Mode is the controller mode applied at start.
type Mode string

// Modes.
const (
	// ModeListenOnly never ACKs, never sends error frames and cannot
	// transmit (CAN_CTRLMODE_LISTENONLY). The default.
	ModeListenOnly Mode = "listen-only"
	// ModeNormal takes part in the bus: it ACKs every frame it receives.
	// Only a port armed for transmit should use it.
	ModeNormal Mode = "normal"
)

// Defaults.
const (
	// DefaultBitrate is J1939's (SAE J1939-11/-15).
	DefaultBitrate = 250_000
	// DefaultIdlePoll is how often an idle port refreshes the kernel's
	// drop counter.
	DefaultIdlePoll = time.Second
)

// Bounds Options.check enforces.
const (
	minBitrate = 10_000    // the slowest rate CAN controllers and slcan offer
	maxBitrate = 1_000_000 // classic CAN's ceiling (ISO 11898-1); FD is not captured
)

// Options configure a Source. Zero fields take the defaults.
type Options struct {
	Name      string // port name operators use ("can0")
	Interface string // network interface ("can0")
	// Bitrate in bit/s, DefaultBitrate when 0. Ignored on virtual links.
	Bitrate int
	// Mode is ModeListenOnly when empty. Ignored on virtual links.
	Mode     Mode
	IdlePoll time.Duration // DefaultIdlePoll
}

// check fills defaults and validates once, at construction.
func (o *Options) check() error {
	if o.Interface == "" {
		return errors.New("socketcan: no interface")
	}
	if o.Name == "" {
		o.Name = o.Interface
	}
	if o.Bitrate == 0 {
		o.Bitrate = DefaultBitrate
	}
	if o.Mode == "" {
		o.Mode = ModeListenOnly
	}
	if o.IdlePoll == 0 {
		o.IdlePoll = DefaultIdlePoll
	}
	if err := CheckBitrate(o.Bitrate); err != nil {
		return fmt.Errorf("socketcan: %s: %w", o.Interface, err)
	}
	switch o.Mode {
	case ModeListenOnly, ModeNormal:
	default:
		return fmt.Errorf("socketcan: %s: mode %q: want %q or %q", o.Interface, o.Mode, ModeListenOnly, ModeNormal)
	}
	if o.IdlePoll < 0 {
		return fmt.Errorf("socketcan: %s: idle poll %v is negative", o.Interface, o.IdlePoll)
	}
	return nil
}

// CheckBitrate reports whether bitrate (bit/s) is one a classic CAN
// controller can run, naming the value when not.
func CheckBitrate(bitrate int) error {
	if bitrate < minBitrate || bitrate > maxBitrate {
		return fmt.Errorf("bitrate %d outside %d..%d", bitrate, minBitrate, maxBitrate)
	}
	return nil
}
