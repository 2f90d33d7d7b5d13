package sip

import (
	"context"
	"fmt"
	"time"
)

// portCallsCheckEvery is how many frames a port scan decodes between
// looks at its context: a few hundred microseconds of work.
const portCallsCheckEvery = 1024

// PortCalls is which Call-IDs one Ethernet port carried in a window, as
// its frame ring still holds it. The SIP store is shared by every
// Ethernet port (its reassembly tables are keyed by address), so a
// dialog's port is learnt by decoding that port's frames again.
type PortCalls struct {
	CallIDs map[string]bool
	// Frames were decoded; Cut is set when MaxExportScanFrames stopped
	// the scan before the window's end, at CutAt.
	Frames int
	Cut    bool
	CutAt  time.Time
	// RingFrom is the oldest frame the ring holds (zero when it holds
	// none): a window starting before it lost what the ring evicted.
	RingFrom time.Time
}

// PortCallIDs decodes the frames port's ring holds in [from, to) (a zero
// bound is open) with the live decoder's options and returns the Call-IDs
// of the SIP messages on them for which keep is true (the caller keeps
// those its snapshot holds, so the set is bounded by the store's
// dialogs). An unknown port is an error naming it; the recorder is not
// read: frames the ring evicted are not scanned, and RingFrom says from
// when the ring holds.
func (e *Exporter) PortCallIDs(ctx context.Context, port string, from, to time.Time, keep func(callID string) bool) (PortCalls, error) {
	e.mu.Lock()
	fs := e.ports[port]
	e.mu.Unlock()
	if fs == nil {
		return PortCalls{}, fmt.Errorf("sip: no frame ring for port %q", port)
	}
	snap := fs.Snapshot()
	out := PortCalls{CallIDs: map[string]bool{}}
	if r, ok := snap.Get(snap.FirstSeq()); ok {
		out.RingFrom = r.Time
	}
	w := window{from: from, to: to}
	if to.IsZero() {
		w.to = time.Unix(1<<62, 0) // open: every frame
	} else {
		w.to = to.Add(-time.Nanosecond) // seqRange's window is closed
	}
	lo, hi := seqRange(snap, w)
	sk := &callIDSink{keep: keep, ids: out.CallIDs}
	an := newAnalyser(sk, e.dec)
	for seq := lo; seq < hi; seq++ {
		r, _ := snap.Get(seq)
		if out.Frames == MaxExportScanFrames {
			out.Cut, out.CutAt = true, r.Time
			break
		}
		if out.Frames%portCallsCheckEvery == 0 {
			if err := ctx.Err(); err != nil {
				return PortCalls{}, err
			}
		}
		an.Feed(r.Time, r.Link, r.Data)
		out.Frames++
	}
	return out, nil
}

// callIDSink collects the Call-IDs of the messages a port scan decodes.
type callIDSink struct {
	keep func(string) bool
	ids  map[string]bool
}

func (s *callIDSink) Add(_ Meta, m *Parsed, _ []byte) {
	id := m.Get(HCallID)
	if len(id) == 0 || s.ids[string(id)] {
		return
	}
	if k := string(id); s.keep(k) {
		s.ids[k] = true
	}
}

func (s *callIDSink) Undecodable(string) {}

var _ sink = (*callIDSink)(nil)
