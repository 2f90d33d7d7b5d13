package rtp

import (
	"net/netip"
	"time"

	"fieldtap/services/sip"
)

// maxRTCPFlowsPerDialog bounds the RTCP address pairs one dialog keeps
// for export: two directions, times a few address changes by re-INVITE.
// Pairs past it are counted in rtcpFlowsDropped, not exported.
const maxRTCPFlowsPerDialog = 8

// flowSpan is one direction of a dialog's RTCP: its address pair, when it
// was first and last seen, and how many datagrams it carried.
type flowSpan struct {
	src, dst    netip.AddrPort
	first, last time.Time
	datagrams   uint64
}

// noteRTCP records an RTCP datagram on the dialog that signalled one of
// its addresses. It allocates only when a new pair appears, and reports
// whether one did (the dialog grew).
func (d *dialogMedia) noteRTCP(src, dst netip.AddrPort, t time.Time) (grew bool) {
	for i := range d.rtcp {
		f := &d.rtcp[i]
		if f.src == src && f.dst == dst {
			f.last = t
			f.datagrams++
			return false
		}
	}
	if len(d.rtcp) >= maxRTCPFlowsPerDialog {
		d.rtcpDropped++
		return false
	}
	d.rtcp = append(d.rtcp, flowSpan{src: src, dst: dst, first: t, last: t, datagrams: 1})
	return true
}

// Flows returns the media flows of callID for export_capture: one per
// RTP stream (its address pair, first and last packet, packet count) and
// one per RTCP address pair the dialog's signalled addresses carried.
// Orphan streams (no dialog) have no Call-ID and are never returned.
func (sn *Snapshot) Flows(callID string) []sip.MediaFlow {
	var out []sip.MediaFlow
	for _, s := range sn.ForCall(callID) {
		out = append(out, sip.MediaFlow{Src: s.Key.Src, Dst: s.Key.Dst, First: s.First, Last: s.Last, Packets: s.Packets})
	}
	if dv := sn.Dialogs[callID]; dv != nil {
		for _, f := range dv.rtcp {
			out = append(out, sip.MediaFlow{Src: f.src, Dst: f.dst, RTCP: true, First: f.first.UTC(), Last: f.last.UTC(), Packets: f.datagrams})
		}
	}
	return out
}

// CallFlows is Flows for every dialog of an export, in the dialogs' order.
func (sn *Snapshot) CallFlows(ds []*sip.Dialog) []sip.MediaFlow {
	var out []sip.MediaFlow
	for _, d := range ds {
		out = append(out, sn.Flows(d.CallID)...)
	}
	return out
}
