package hep

import (
	"net/netip"

	"fieldtap/services/netdecode"
	"fieldtap/services/rtp"
	"fieldtap/services/sip"
)

// CallLookup finds the Call-ID whose SDP announced an address pair
// (*rtp.Analyser).
type CallLookup interface {
	CallOf(src, dst netip.AddrPort) (string, bool)
}

// Tee is the SPAN analyser's media hook when HEP export of RTCP is on:
// it hands everything to the media analyser first, then exports each
// RTCP datagram with the Call-ID the analyser filed it under.
type Tee struct {
	Next  sip.MediaHook
	Calls CallLookup
	Exp   *Exporter
}

// SIPMessage implements sip.MediaHook.
func (t *Tee) SIPMessage(meta sip.Meta, m *sip.Parsed) { t.Next.SIPMessage(meta, m) }

// Datagram implements sip.MediaHook.
func (t *Tee) Datagram(d *netdecode.Datagram) {
	t.Next.Datagram(d)
	if !rtp.IsRTCP(d.Payload) {
		return
	}
	callID, ok := t.Calls.CallOf(d.Src, d.Dst)
	if !ok {
		t.Exp.drop(DropNoCall)
		return
	}
	t.Exp.report(d, callID)
}

// Hold implements sip.Holder for the media analyser behind the tee.
func (t *Tee) Hold() {
	if h, ok := t.Next.(sip.Holder); ok {
		h.Hold()
	}
}

// Release implements sip.Holder.
func (t *Tee) Release() {
	if h, ok := t.Next.(sip.Holder); ok {
		h.Release()
	}
}

var (
	_ sip.MediaHook = (*Tee)(nil)
	_ sip.Holder    = (*Tee)(nil)
	_ sip.Tap       = (*Exporter)(nil)
	_ CallLookup    = (*rtp.Analyser)(nil)
)
