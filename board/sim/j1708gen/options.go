package j1708gen

import (
	"fmt"
	"time"
)

// Options select what Generate produces. The zero Seed is a valid seed.
type Options struct {
	Seed     int64
	Start    time.Time     // timestamp of the first message
	Duration time.Duration // messages span [Start, Start+Duration); must be positive
}

// Message is one J1708 message: MID, data, checksum. All bytes sum to 0
// mod 256; a message is wire.MinJ1708Message to wire.MaxJ1708Message bytes long.
type Message struct {
	Time time.Time
	Data []byte // owned by the receiver
}

func (o Options) check() error {
	if o.Duration <= 0 {
		return fmt.Errorf("j1708gen: duration %v must be positive", o.Duration)
	}
	return nil
}
