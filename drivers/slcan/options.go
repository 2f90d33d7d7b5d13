package slcan

import (
	"errors"
	"fmt"
	"time"
)

// Defaults.
const (
	// DefaultBitrate is J1939's (SAE J1939-11/-15), the bus this box is
	// clipped onto most.
	DefaultBitrate = 250_000
	// DefaultBaud is the serial rate of UART-attached adapters; USB CDC
	// adapters (CANable, USBtin) ignore it.
	DefaultBaud = 115_200
	// DefaultAckTimeout is how long an init command waits for its reply.
	// Adapters answer within a few ms; some never answer, so silence past
	// this is taken as an ack without one.
	DefaultAckTimeout = 300 * time.Millisecond
	// DefaultIdlePoll bounds one read while idle, so a stalled port is
	// noticed and cancellation never waits on a read.
	DefaultIdlePoll = 200 * time.Millisecond
	// DefaultLateReplyWait is how long a transmit's reply is still waited
	// for after AckTimeout, writing nothing else meanwhile, so a reply
	// that comes is that transmit's: an adapter whose controller waits
	// for the bus, or a loaded USB link, answers a few hundred ms late
	// (one was measured about 300 ms late, issue #33).
	DefaultLateReplyWait = 2 * time.Second
)

// Bounds Options.check enforces.
const (
	minAckTimeout = 10 * time.Millisecond // below this a USB round trip does not fit
	maxAckTimeout = 5 * time.Second       // above this a dead adapter stalls start-up
	// maxLateReplyWait bounds how long a port writes nothing after an
	// unanswered transmit (listen-only never waits for it).
	maxLateReplyWait = 30 * time.Second
)

// bitrates maps the Lawicel S command digit to its bitrate (S0..S8).
var bitrates = [...]int{10_000, 20_000, 50_000, 100_000, 125_000, 250_000, 500_000, 800_000, 1_000_000}

// Options configure a Source. Zero fields take the defaults.
type Options struct {
	Name       string        // port name operators use ("can1")
	Device     string        // "/dev/ttyACM0"
	Bitrate    int           // CAN bitrate, one of the S0–S8 rates; DefaultBitrate
	Baud       int           // serial rate; DefaultBaud
	AckTimeout time.Duration // DefaultAckTimeout
	IdlePoll   time.Duration // DefaultIdlePoll
	// LateReplyWait: DefaultLateReplyWait; from minAckTimeout to
	// maxLateReplyWait.
	LateReplyWait time.Duration
}

// check fills defaults and validates once, at construction.
func (o *Options) check() error {
	if o.Device == "" {
		return errors.New("slcan: no serial device")
	}
	if o.Name == "" {
		o.Name = "can"
	}
	if o.Bitrate == 0 {
		o.Bitrate = DefaultBitrate
	}
	if o.Baud == 0 {
		o.Baud = DefaultBaud
	}
	if o.AckTimeout == 0 {
		o.AckTimeout = DefaultAckTimeout
	}
	if o.IdlePoll == 0 {
		o.IdlePoll = DefaultIdlePoll
	}
	if o.LateReplyWait == 0 {
		o.LateReplyWait = DefaultLateReplyWait
	}
	if _, err := BitrateCommand(o.Bitrate); err != nil {
		return err
	}
	if o.Baud < 1200 || o.Baud > 4_000_000 {
		return fmt.Errorf("slcan: baud %d outside 1200..4000000", o.Baud)
	}
	if o.AckTimeout < minAckTimeout || o.AckTimeout > maxAckTimeout {
		return fmt.Errorf("slcan: ack timeout %v outside %v..%v", o.AckTimeout, minAckTimeout, maxAckTimeout)
	}
	if o.LateReplyWait < minAckTimeout || o.LateReplyWait > maxLateReplyWait {
		return fmt.Errorf("slcan: late reply wait %v outside %v..%v", o.LateReplyWait, minAckTimeout, maxLateReplyWait)
	}
	if o.IdlePoll <= 0 {
		return fmt.Errorf("slcan: idle poll %v is not positive", o.IdlePoll)
	}
	return nil
}

// BitrateCommand returns the Lawicel command ("S5") for bitrate, or an error
// naming the value when no S0–S8 code has it.
func BitrateCommand(bitrate int) (string, error) {
	for i, b := range bitrates {
		if b == bitrate {
			return fmt.Sprintf("S%d", i), nil
		}
	}
	return "", fmt.Errorf("slcan: bitrate %d has no S0–S8 code; want one of %v", bitrate, bitrates)
}
