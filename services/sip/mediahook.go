package sip

import "fieldtap/services/netdecode"

// MediaHook sees what media analysis needs from the SPAN decoder: every
// stored SIP message (for SDP offers/answers and INFO digits) and every
// UDP datagram that is not SIP (RTP, RTCP). Both run on the port's
// consumer goroutine; m, meta and d.Payload are borrowed for the call.
type MediaHook interface {
	SIPMessage(meta Meta, m *Parsed)
	Datagram(d *netdecode.Datagram)
}

// Holder is a MediaHook that can keep its lock for a batch of frames on
// the feeding goroutine (Analyser.Hold), so each datagram and message of
// the batch takes none.
type Holder interface {
	Hold()
	Release()
}

// SetMediaHook attaches h; call it before the first Feed. nil detaches.
func (a *Analyser) SetMediaHook(h MediaHook) { a.media = h }

func (a *Analyser) mediaMessage(meta Meta) {
	if a.media != nil {
		a.media.SIPMessage(meta, &a.msg)
	}
}

func (a *Analyser) mediaDatagram(d *netdecode.Datagram) {
	if a.media != nil {
		a.media.Datagram(d)
	}
}
