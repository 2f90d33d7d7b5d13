package sip

import (
	"time"

	"fieldtap/services/netdecode"
)

// TCPHook sees what a per-flow TCP and TLS observer needs from the SPAN
// decoder (services/trunk): every TCP segment's header, and the in-order
// bytes of the streams the analyser classified as TLS, which it would
// otherwise skip unread. Both run on the port's consumer goroutine; data
// is borrowed for the call, and TLS returns how many bytes it consumed,
// as netdecode.Handler.TCP does.
type TCPHook interface {
	Segment(g netdecode.Segment)
	TLS(s *netdecode.Stream, t time.Time, data []byte) int
}

// SetTCPHook attaches h; call it before the first Feed. nil detaches.
func (a *Analyser) SetTCPHook(h TCPHook) { a.tcpHook = h }

// Segment implements netdecode.SegmentObserver.
func (a *Analyser) Segment(g netdecode.Segment) {
	if a.tcpHook != nil {
		a.tcpHook.Segment(g)
	}
}

// offerTLS offers a TLS stream's bytes to the hook; without one they are
// consumed unread.
func (a *Analyser) offerTLS(s *netdecode.Stream, t time.Time, b []byte) int {
	if a.tcpHook == nil {
		return len(b)
	}
	return a.tcpHook.TLS(s, t, b)
}
