package j1708

import (
	"errors"
	"fmt"
	"time"
)

// Serial defaults.
const (
	// DefaultBaud is the J1708 bit rate.
	DefaultBaud = 9600
	// DefaultGap ends a message: SAE J1708 idle is at least 10 bit times
	// (about 1.04 ms at 9600 baud) between messages, while bytes of one
	// message follow within 2 bit times.
	DefaultGap = time.Millisecond
	// DefaultIdlePoll is how long a read waits while no message is in
	// progress; it bounds how late cancellation is noticed.
	DefaultIdlePoll = 100 * time.Millisecond
	// bitsPerChar is 8N1: start, 8 data, stop.
	bitsPerChar = 10
	// readBuffer is one read; a UART FIFO rarely holds more.
	readBuffer = 256
)

// Bounds Options.check enforces.
const (
	minGap = 100 * time.Microsecond // below this Linux timers are noise
	maxGap = 100 * time.Millisecond // above this every message glues to the next
)

// Options configure a serial Source. Zero fields take the defaults.
type Options struct {
	Name     string        // port name operators use ("j1708")
	Device   string        // "/dev/ttyS1"
	Baud     int           // DefaultBaud
	Gap      time.Duration // idle time that ends a message; DefaultGap
	IdlePoll time.Duration // DefaultIdlePoll
	// Priority is the J1708 message priority (1..8) the write side waits
	// for bus access with; DefaultPriority when 0.
	Priority int
	// EchoSlack is how long past a message's wire time its read-back may
	// take; DefaultEchoSlack when 0. A slow adapter (or a loaded test
	// machine) needs more.
	EchoSlack time.Duration
}

// check fills defaults and validates once, at construction.
func (o *Options) check() error {
	if o.Device == "" {
		return errors.New("j1708: no serial device")
	}
	if o.Name == "" {
		o.Name = "j1708"
	}
	if o.Baud == 0 {
		o.Baud = DefaultBaud
	}
	if o.Gap == 0 {
		o.Gap = DefaultGap
	}
	if o.IdlePoll == 0 {
		o.IdlePoll = DefaultIdlePoll
	}
	if o.Priority == 0 {
		o.Priority = DefaultPriority
	}
	if o.EchoSlack == 0 {
		o.EchoSlack = DefaultEchoSlack
	}
	if o.EchoSlack < 0 || o.EchoSlack > maxEchoSlack {
		return fmt.Errorf("j1708: echo slack %v outside 0..%v", o.EchoSlack, maxEchoSlack)
	}
	if o.Priority < MinPriority || o.Priority > MaxPriority {
		return fmt.Errorf("j1708: priority %d outside %d..%d", o.Priority, MinPriority, MaxPriority)
	}
	if o.Baud < 300 || o.Baud > 115200 {
		return fmt.Errorf("j1708: baud %d outside 300..115200", o.Baud)
	}
	if o.Gap < minGap || o.Gap > maxGap {
		return fmt.Errorf("j1708: gap %v outside %v..%v", o.Gap, minGap, maxGap)
	}
	if o.IdlePoll < o.Gap {
		return fmt.Errorf("j1708: idle poll %v shorter than the gap %v", o.IdlePoll, o.Gap)
	}
	return nil
}

func (o Options) byteTime() time.Duration {
	return time.Second * bitsPerChar / time.Duration(o.Baud)
}
