package j1939gen

import (
	"fmt"
	"time"
)

// Options select what Generate produces. The zero Seed is a valid seed.
type Options struct {
	Seed      int64
	Start     time.Time     // timestamp of the first frame
	Duration  time.Duration // frames span [Start, Start+Duration); must be positive
	Interface string        // interface name in candump logs ("" => DefaultInterface)
	// Pass numbers the consecutive spans of one run (the sim board plays
	// 60 s passes): the NAMEs come from Seed alone and stay for the life
	// of the run, the drive and the jitter from Seed and Pass. ECUs claim
	// their addresses on pass 0 only, as they do at power-up.
	Pass int64
	// ClaimConflict adds, ConflictAt into pass 0, a second device that
	// claims the body controller's address with a NAME that loses
	// arbitration: the body controller claims again, and the device gives
	// up with a Cannot Claim from the null address (J1939-81 §4.4.3).
	ClaimConflict bool
	// Workshop adds a service tool (SA 0xF9) that, WorkshopAt into every
	// pass, runs a UDS session with the engine over ISO 15765-2 normal
	// fixed addressing, then reads DM2 and clears the active DTCs (DM11).
	// The engine's DM1 then reports no active fault until it re-detects
	// it, ReDetect later.
	Workshop bool
}

// Frame is one CAN frame with its bus time.
type Frame struct {
	Time     time.Time
	ID       uint32 // 29-bit identifier
	Extended bool   // always true: J1939 uses 29-bit identifiers
	Data     []byte // 0 to 8 bytes, owned by the receiver
}

// DefaultInterface names the bus in candump logs when Options.Interface is empty.
const DefaultInterface = "can0"

func (o Options) iface() string {
	if o.Interface == "" {
		return DefaultInterface
	}
	return o.Interface
}

func (o Options) check() error {
	if o.Duration <= 0 {
		return fmt.Errorf("j1939gen: duration %v must be positive", o.Duration)
	}
	if o.Pass < 0 {
		return fmt.Errorf("j1939gen: pass %d must not be negative", o.Pass)
	}
	return nil
}
