package sim

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"fieldtap/board/sim/simecu"
	"fieldtap/drivers/wire"
)

// maxOnBus bounds the frames written or answered but not yet on the bus:
// a plan's 256 frames and their answers fit many times over.
const maxOnBus = 4096

// Errors of the transmit side.
var (
	ErrListenOnly = errors.New("the port is listen-only")
	ErrNotPlaying = errors.New("the port is not playing paced traffic (the sim board transmits only at a real-time speed, and while it runs)")
	ErrBusFull    = errors.New("too many frames waiting for the simulated bus")
)

// onBus is a frame due on the port's bus at the simulated time at.
type onBus struct {
	at   time.Time
	id   uint32 // with wire.CANEFF for 29-bit
	data []byte
	// heard: another node sent it, so the tap sees it (a controller does
	// not receive its own frames).
	heard bool
}

// txSide is a CAN port's simulated writer and the truck's ECU behind it.
// Writes and answers wait in due until the port's Run puts them on the
// bus among the generated traffic, at their simulated time; nothing here
// runs on its own goroutine.
type txSide struct {
	mu      sync.Mutex
	ecu     *simecu.ECU
	active  bool
	playing bool
	clock   func() time.Time // the simulated time now, while playing
	due     []onBus          // by at
	tap     func(t time.Time, id uint32, data []byte)
	wake    chan struct{}
}

func newTxSide() *txSide { return &txSide{ecu: simecu.New(), wake: make(chan struct{}, 1)} }

// WriteFrame puts one frame on the simulated bus now (id with wire.CANEFF
// for 29-bit) and the ECU's answer after it. It is refused while the port
// is listen-only or not playing.
func (p *Port) WriteFrame(ctx context.Context, id uint32, data []byte) error {
	tx := p.tx
	if tx == nil {
		return fmt.Errorf("port %s has no transmit side", p.name)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if _, err := wire.EncodeCAN(id, data); err != nil {
		return fmt.Errorf("port %s: %w", p.name, err)
	}
	tx.mu.Lock()
	defer tx.mu.Unlock()
	switch {
	case !tx.active:
		return fmt.Errorf("port %s: %w", p.name, ErrListenOnly)
	case !tx.playing:
		return fmt.Errorf("port %s: %w", p.name, ErrNotPlaying)
	}
	replies := tx.ecu.Handle(id, data)
	if len(tx.due)+1+len(replies) > maxOnBus {
		return fmt.Errorf("port %s: %w", p.name, ErrBusFull)
	}
	at := tx.clock()
	tx.add(onBus{at: at, id: id, data: append([]byte(nil), data...)})
	for _, r := range replies {
		at = at.Add(r.Delay)
		tx.add(onBus{at: at, id: r.ID, data: r.Data, heard: true})
	}
	select {
	case tx.wake <- struct{}{}:
	default:
	}
	return nil
}

// add keeps due ordered by time, equal times in arrival order.
func (tx *txSide) add(f onBus) {
	i := len(tx.due)
	for i > 0 && tx.due[i-1].at.After(f.at) {
		i--
	}
	tx.due = append(tx.due, onBus{})
	copy(tx.due[i+1:], tx.due[i:])
	tx.due[i] = f
}

// SetTransmit switches the port between active (true) and listen-only.
func (p *Port) SetTransmit(on bool) error {
	if p.tx == nil {
		return fmt.Errorf("port %s has no transmit side", p.name)
	}
	p.tx.mu.Lock()
	p.tx.active = on
	p.tx.mu.Unlock()
	return nil
}

// Transmitting reports whether the port is active (not listen-only).
func (p *Port) Transmitting() bool {
	if p.tx == nil {
		return false
	}
	p.tx.mu.Lock()
	defer p.tx.mu.Unlock()
	return p.tx.active
}

// CanTransmit reports whether the port has a transmit side (the CAN port).
func (p *Port) CanTransmit() bool { return p.tx != nil }

// SetTap makes fn see every frame other nodes put on the port's bus (the
// ECU's answers), as a CAN controller receives them; data is lent.
func (p *Port) SetTap(fn func(t time.Time, id uint32, data []byte)) {
	if p.tx == nil {
		return
	}
	p.tx.mu.Lock()
	p.tx.tap = fn
	p.tx.mu.Unlock()
}

// play starts or ends the window in which writes are taken; clock is the
// simulated time now. Frames still due when play ends are dropped.
func (tx *txSide) play(clock func() time.Time) {
	tx.mu.Lock()
	defer tx.mu.Unlock()
	tx.playing, tx.clock = clock != nil, clock
	if clock == nil {
		tx.due = nil
	}
}

// take removes and returns the frames due at or before t, and the time of
// the next one (zero when none waits).
func (tx *txSide) take(t time.Time) (out []onBus, next time.Time) {
	tx.mu.Lock()
	defer tx.mu.Unlock()
	n := 0
	for n < len(tx.due) && !tx.due[n].at.After(t) {
		n++
	}
	out = append(out, tx.due[:n]...)
	tx.due = tx.due[n:]
	if len(tx.due) > 0 {
		next = tx.due[0].at
	}
	return out, next
}

// heard hands f to the tap when another node sent it.
func (tx *txSide) heard(f onBus) {
	if !f.heard {
		return
	}
	tx.mu.Lock()
	tap := tx.tap
	tx.mu.Unlock()
	if tap != nil {
		tap(f.at, f.id, f.data)
	}
}
