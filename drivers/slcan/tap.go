package slcan

import "time"

// TapFunc sees every frame the session captures, on the reader goroutine,
// right after it is offered to the hand-off: t is the host receive time,
// id carries wire.CANEFF/CANRTR, and data is borrowed (valid only
// during the call). It must not block: it delays capture.
type TapFunc func(t time.Time, id uint32, data []byte)

// SetTap installs fn (nil removes it). The transmit path uses it to see an
// ECU's answer without waiting behind the hand-off and its drops.
func (s *Source) SetTap(fn TapFunc) {
	if fn == nil {
		s.tap.Store(nil)
		return
	}
	s.tap.Store(&fn)
}
