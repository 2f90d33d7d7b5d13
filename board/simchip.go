package board

import (
	"sync"

	"periph.io/x/conn/v3/gpio"
	"periph.io/x/conn/v3/gpio/gpiotest"
)

// simEdgeQueue is how many fake edges a sim pin buffers before a sender
// blocks; a test sends one or two at a time.
const simEdgeQueue = 16

// SimChip is a chip of gpiotest pins, made on first use, for the sim
// board and tests. Pins start low; arm inputs read per their pull.
type SimChip struct {
	mu   sync.Mutex
	pins map[Line]*gpiotest.Pin
}

// Pin returns the fake pin for l, so a test can set levels and send edges.
func (s *SimChip) Pin(l Line) *gpiotest.Pin {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pins == nil {
		s.pins = map[Line]*gpiotest.Pin{}
	}
	p, ok := s.pins[l]
	if !ok {
		p = &gpiotest.Pin{N: l.String(), Num: l.Offset, EdgesChan: make(chan gpio.Level, simEdgeQueue)}
		s.pins[l] = p
	}
	return p
}

// Line implements Chip.
func (s *SimChip) Line(l Line) (gpio.PinIO, error) { return s.Pin(l), nil }

var _ Chip = (*SimChip)(nil)
