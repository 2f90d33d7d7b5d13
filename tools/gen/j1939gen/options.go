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
	return nil
}
