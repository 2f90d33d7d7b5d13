package j1939

import (
	"iter"
	"time"

	"fieldtap/drivers/wire"
	"fieldtap/services/canbus"
	"fieldtap/services/dbc"
	"fieldtap/services/ring"
)

// Window selects stored frames by time: Since inclusive, Until exclusive;
// a zero bound is open.
type Window struct {
	Since time.Time
	Until time.Time
}

// Contains reports whether t is inside w.
func (w Window) Contains(t time.Time) bool {
	return (w.Since.IsZero() || !t.Before(w.Since)) && (w.Until.IsZero() || t.Before(w.Until))
}

// Span is what a window of frames covered: its bounds where given, else
// the first and last frame it held.
type Span struct {
	Port   string
	From   time.Time
	To     time.Time
	Frames int
	// Seconds is To − From; rates are frames per second over it. Nil
	// with a reason when the window holds fewer than two frame times.
	Seconds       *float64
	SecondsReason string
	// OldestStored is the time of the port's oldest stored frame: a window
	// that starts before it lost frames to the ring's bounds.
	OldestStored *time.Time
	Evicted      bool
}

// scanner runs a fresh Decoder over a window of one port's frames and
// hands every message (direct, and reassembled transfers) and every ended
// transfer to its callbacks, with the ring seq of the frame that made it.
type scanner struct {
	seq       uint64
	onMessage func(seq uint64, m *Message)
	onSession func(seq uint64, s Session)
	// onFrame sees every data frame in the window, 11-bit ones too.
	onFrame func(seq uint64, r *canbus.Record)
	// stop ends the scan after the current frame.
	stop bool
	// rec holds the frame being fed: the decoder and the callbacks keep
	// pointers into it for the step, and one reused copy allocates nothing.
	rec canbus.Record
}

func (sc *scanner) run(port string, snap ring.Snapshot[canbus.Record], w Window) Span {
	d := NewDecoder()
	if sc.onMessage != nil {
		d.OnMessage = func(m *Message) { sc.onMessage(sc.seq, m) }
	}
	if sc.onSession != nil {
		d.OnSession = func(s Session) { sc.onSession(sc.seq, s) }
	}
	sp := Span{Port: port}
	var first, last time.Time
	oldest := true
	snap.Range(snap.FirstSeq(), func(seq uint64, r canbus.Record) bool {
		if oldest {
			t := r.Time
			sp.OldestStored, oldest = &t, false
		}
		if !w.Contains(r.Time) || r.ID&(wire.CANRTR|wire.CANERR) != 0 {
			return true
		}
		if sp.Frames == 0 || r.Time.Before(first) {
			first = r.Time
		}
		if r.Time.After(last) {
			last = r.Time
		}
		sp.Frames++
		sc.seq, sc.rec = seq, r
		if sc.onFrame != nil {
			sc.onFrame(seq, &sc.rec)
		}
		d.Feed(r.Time, wire.CANID(r.ID), r.ID&wire.CANEFF != 0, sc.rec.Payload())
		return !sc.stop
	})
	if sc.onSession != nil {
		d.OpenSessions(func(s Session) { sc.onSession(sc.seq, s) })
	}
	sp.From, sp.To = w.Since, w.Until
	if sp.From.IsZero() {
		sp.From = first
	}
	if sp.To.IsZero() {
		sp.To = last
	}
	if secs := sp.To.Sub(sp.From).Seconds(); secs > 0 {
		sp.Seconds = &secs
	} else {
		sp.SecondsReason = "the window holds fewer than two distinct frame times"
	}
	sp.Evicted = sp.OldestStored != nil && !w.Since.IsZero() && w.Since.Before(*sp.OldestStored)
	return sp
}

// Payloads yields what a DBC can decode from a window of a port's frames:
// every data frame (11- and 29-bit) and, after the frame that completes
// it, every reassembled J1939 transfer with its PGN and source address.
// It feeds dbc.Database.DecodeWindow.
func Payloads(snap ring.Snapshot[canbus.Record], w Window) iter.Seq[dbc.Frame] {
	return func(yield func(dbc.Frame) bool) {
		var sc scanner
		sc.onFrame = func(seq uint64, r *canbus.Record) {
			if !sc.stop && !yield(dbc.Frame{Seq: seq, Time: r.Time, ID: r.ID, Data: r.Payload()}) {
				sc.stop = true
			}
		}
		sc.onMessage = func(seq uint64, m *Message) {
			if sc.stop || m.Via == ViaDirect {
				return
			}
			f := dbc.Frame{Seq: seq, Time: m.Time, ID: transferID(m.ID), Data: m.Data, Transfer: m.Via.String(), PGN: m.ID.PGN, SA: m.ID.SA}
			if !yield(f) {
				sc.stop = true
			}
		}
		sc.run("", snap, w)
	}
}

// transferPriority is the priority given to a transfer's id: the data
// travelled in TP.DT frames at their own priority, which is not the
// message's. 6 is J1939-21's default for non-control messages.
const transferPriority = 6

// transferID spells a reassembled transfer as the 29-bit id one frame of
// it would have had.
func transferID(x ID) uint32 {
	id := uint32(transferPriority)<<26 | x.PGN<<8 | uint32(x.SA)
	if x.PF < pdu2Min {
		id = id&^0xFF00 | uint32(x.DA)<<8
	}
	return id | wire.CANEFF
}
