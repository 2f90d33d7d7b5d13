package daemon

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"fieldtap/board/sim"
	"fieldtap/drivers/capture"
	"fieldtap/drivers/j1708"
	"fieldtap/drivers/slcan"
	"fieldtap/drivers/socketcan"
	"fieldtap/services/transmit"
)

// rxDepth bounds the frames a plan's listener holds unread: a J1939
// global request may be answered by a few dozen ECUs with a few BAM
// packets each.
const rxDepth = 256

// transmitSide fills p's Writer, Mode and Listener from src when its
// driver can transmit, and reports whether it could. Drivers never see
// services/transmit: the adapters are here.
func transmitSide(src capture.Source, p *transmit.Port) bool {
	switch s := src.(type) {
	case *slcan.Source:
		hub := &rxHub{}
		s.SetTap(hub.deliver)
		p.Writer, p.Mode, p.Listener = s, slcanMode(s), hub
		return true
	case *socketcan.Source:
		hub := &rxHub{}
		s.SetTap(hub.deliver)
		p.Writer, p.Mode, p.Listener = s, socketcanMode(s), hub
		return true
	case *sim.Port:
		if !s.CanTransmit() {
			return false
		}
		hub := &rxHub{}
		s.SetTap(hub.deliver)
		p.Writer, p.Mode, p.Listener = s, switchMode(s), hub
		return true
	case *j1708.Source:
		// No Listener: j1708_send expects no answer, so the gatekeeper
		// never waits for one.
		p.Writer, p.Mode = s, switchMode(s)
		return true
	}
	return false
}

// modeSwitch maps the gatekeeper's two modes onto a driver's own: it is
// told whether the mode asked for is active (else listen-only); any
// other mode is refused before it is called.
type modeSwitch func(ctx context.Context, active bool) error

func (set modeSwitch) SetMode(ctx context.Context, mode transmit.Mode) error {
	switch mode {
	case transmit.ModeActive:
		return set(ctx, true)
	case transmit.ModeListenOnly:
		return set(ctx, false)
	}
	return fmt.Errorf("mode %q: want %q or %q", mode, transmit.ModeActive, transmit.ModeListenOnly)
}

// socketcanMode maps the gatekeeper's modes onto the controller's.
func socketcanMode(s *socketcan.Source) modeSwitch {
	return func(ctx context.Context, active bool) error {
		if active {
			return s.SetMode(ctx, socketcan.ModeNormal)
		}
		return s.SetMode(ctx, socketcan.ModeListenOnly)
	}
}

// simCANPort is the sim board's port with a simulated writer.
const simCANPort = "can0"

// simWriter reports whether src is a sim port with a transmit side.
func simWriter(src capture.Source) bool {
	s, ok := src.(*sim.Port)
	return ok && s.CanTransmit()
}

// switchMode maps the gatekeeper's modes onto a driver's transmit switch
// (the sim port's, J1708's): listen-only refuses every write, as a
// controller in listen-only mode sends nothing. J1708 has no controller
// mode: the switch is all its listen-only is.
func switchMode(s interface{ SetTransmit(on bool) error }) modeSwitch {
	return func(_ context.Context, active bool) error { return s.SetTransmit(active) }
}

// slcanMode maps the gatekeeper's modes onto L and O.
func slcanMode(s *slcan.Source) modeSwitch {
	return func(ctx context.Context, active bool) error {
		if active {
			return s.SetMode(ctx, slcan.Normal)
		}
		return s.SetMode(ctx, slcan.ListenOnly)
	}
}

// rxHub hands a port's received frames to whoever listens (a running
// plan). deliver runs on the driver's reader and never blocks: a listener
// that falls rxDepth behind loses frames, counted in dropped.
type rxHub struct {
	mu      sync.Mutex
	subs    map[chan transmit.RxFrame]struct{}
	dropped atomic.Uint64
}

// deliver copies data (the driver lends it).
func (h *rxHub) deliver(t time.Time, id uint32, data []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.subs) == 0 {
		return
	}
	f := transmit.RxFrame{Time: t, ID: id, Data: append([]byte(nil), data...)}
	for ch := range h.subs {
		select {
		case ch <- f:
		default:
			h.dropped.Add(1)
		}
	}
}

// Listen implements transmit.Listener; the channel is closed by stop.
func (h *rxHub) Listen(ctx context.Context) (<-chan transmit.RxFrame, func()) {
	ch := make(chan transmit.RxFrame, rxDepth)
	h.mu.Lock()
	if h.subs == nil {
		h.subs = map[chan transmit.RxFrame]struct{}{}
	}
	h.subs[ch] = struct{}{}
	h.mu.Unlock()
	var once sync.Once
	return ch, func() {
		once.Do(func() {
			h.mu.Lock()
			delete(h.subs, ch)
			h.mu.Unlock()
			close(ch)
		})
	}
}

var (
	_ transmit.Writer     = (*slcan.Source)(nil)
	_ transmit.Writer     = (*socketcan.Source)(nil)
	_ transmit.Writer     = (*j1708.Source)(nil)
	_ transmit.Writer     = (*sim.Port)(nil)
	_ transmit.ModeSetter = modeSwitch(nil)
	_ transmit.Listener   = (*rxHub)(nil)
)
