package j1939

import (
	"encoding/binary"
	"slices"
	"time"
)

// TP.CM control bytes (J1939-21 §5.10.3).
const (
	cmRTS   = 16
	cmCTS   = 17
	cmEoMA  = 19
	cmBAM   = 32
	cmAbort = 255
)

// Transport bounds and timeouts (J1939-21 §5.10.2, §5.12.3).
const (
	// MaxTPSize is the largest transfer: 255 packets of 7 bytes.
	MaxTPSize    = 1785
	tpMinSize    = 9 // a smaller message fits one frame and must not use TP
	tpBytesPerDT = 7
	tpMaxPackets = 255
	// T1: a receiver gives up 750 ms after the last DT while more are due;
	// it also bounds the gap between BAM packets (50–200 ms sent).
	TimeoutT1 = 750 * time.Millisecond
	// T2/T3 (1250 ms) bound the waits around a CTS; one RTS/CTS session
	// with no traffic at all for that long has failed whichever side stalled.
	TimeoutT2 = 1250 * time.Millisecond
	// MaxOpenSessions bounds concurrent transfers per port. J1939 allows
	// one BAM per source (at most 254) plus RTS/CTS pairs; an attack that
	// announces more is refused and counted rather than growing memory.
	MaxOpenSessions = 256
	// observerGrace is added to every timeout: an observer must not end a
	// session before the participants do, or it would miss the Abort a
	// sender sends when its own T3 expires (seen 1.258 s after an RTS).
	observerGrace = 250 * time.Millisecond
	// sweepEvery is how far bus time moves between timeout sweeps.
	sweepEvery = 100 * time.Millisecond
)

// TPKind says how a multi-packet message travelled.
type TPKind uint8

// Transfer kinds. ViaDirect is a single frame.
const (
	ViaDirect TPKind = iota
	ViaBAM
	ViaRTS
	// ViaMultiPG is a C-PG of a J1939-22 Multi-PG frame (CAN FD).
	ViaMultiPG
)

func (k TPKind) String() string {
	switch k {
	case ViaBAM:
		return "tp-BAM"
	case ViaRTS:
		return "tp-RTS"
	case ViaMultiPG:
		return "multi-pg"
	}
	return "direct"
}

// TPStatus is how a session ended.
type TPStatus uint8

// Session outcomes.
const (
	TPOpen       TPStatus = iota // still running (only in open-session views)
	TPComplete                   // every DT packet 1..N arrived
	TPAborted                    // a Connection Abort named it
	TPTimedOut                   // a J1939-21 timeout expired
	TPSuperseded                 // a new BAM/RTS for the same (SA, DA) replaced it
	TPRefused                    // MaxOpenSessions was reached, or the announcement was invalid
)

// tpStatusNames is TPStatus.String's table, in constant order.
var tpStatusNames = [...]string{"open", "complete", "aborted", "timed_out", "superseded", "refused"}

func (s TPStatus) String() string { return tpStatusNames[s] }

// TPStatusNames lists every status name, for a filter's accepted values.
func TPStatusNames() []string { return slices.Clone(tpStatusNames[:]) }

// Session is one transport transfer as it ended (or stands).
type Session struct {
	// ID numbers the port's announcements in arrival order, refused ones
	// included: a session keeps its id from open to end, so a listing
	// ordered by id is stable while sessions close.
	ID          uint64
	Kind        TPKind
	Status      TPStatus
	SA, DA      uint8
	PGN         uint32 // the transferred PGN
	Size        int    // announced bytes
	Packets     int    // announced DT packets
	Received    int    // distinct DT packets seen
	AbortReason uint8
	Start, End  time.Time
}

// tpSession is an open transfer.
type tpSession struct {
	Session
	last time.Time
	seen [4]uint64 // bit per sequence number 1..255
	buf  [MaxTPSize]byte
}

type tpKey struct{ sa, da uint8 }

// TPCounters count TP.CM control frames and session outcomes.
type TPCounters struct {
	BAM         uint64
	RTS         uint64
	CTS         uint64
	EoMA        uint64
	Abort       uint64
	OtherCM     uint64
	Complete    uint64
	CompleteBAM uint64
	CompleteRTS uint64
	Aborted     uint64
	TimedOut    uint64
	Superseded  uint64
	Refused     uint64
	Invalid     uint64
	// OrphanDT counts DT frames with no open session (after completion,
	// or for a transfer whose announcement was never seen).
	OrphanDT    uint64
	BadSequence uint64
	DuplicateDT uint64
	// AbortUnmatched counts aborts that named no open session.
	AbortUnmatched uint64
	// ShortPackets counts announcements whose packet count cannot carry
	// the announced size; such a transfer delivers packets×7 bytes.
	ShortPackets uint64
}

// reassembler tracks open transfers of one port.
type reassembler struct {
	open      map[tpKey]*tpSession
	free      []*tpSession
	lastSweep time.Time
	nextSweep time.Time // lastSweep + sweepEvery
	ids       uint64    // the last session id given
	c         TPCounters
	onEnd     func(Session)
	onMessage func(t time.Time, pgn uint32, sa, da uint8, data []byte, via TPKind)
}

func newReassembler() reassembler {
	return reassembler{open: make(map[tpKey]*tpSession)}
}

// cm handles one TP.CM frame from sa to da.
func (r *reassembler) cm(t time.Time, sa, da uint8, d []byte) {
	if len(d) < 8 {
		r.c.Invalid++
		return
	}
	pgn := uint32(d[5]) | uint32(d[6])<<8 | uint32(d[7])<<16
	switch d[0] {
	case cmBAM, cmRTS:
		kind := ViaBAM
		if d[0] == cmRTS {
			kind = ViaRTS
			r.c.RTS++
		} else {
			r.c.BAM++
		}
		size := int(binary.LittleEndian.Uint16(d[1:3]))
		packets := int(d[3])
		k := tpKey{sa, da}
		if old := r.open[k]; old != nil {
			r.end(k, old, TPSuperseded, t)
		}
		r.ids++
		s := Session{ID: r.ids, Kind: kind, SA: sa, DA: da, PGN: pgn, Size: size, Packets: packets, Start: t, End: t}
		// J1939-21 wants TP only above 8 bytes, but real tools send less;
		// such a transfer is still reassembled.
		if size == 0 || size > MaxTPSize || packets == 0 {
			r.c.Invalid++
			s.Status = TPRefused
			r.c.Refused++
			r.emitEnd(s)
			return
		}
		if len(r.open) >= MaxOpenSessions {
			s.Status = TPRefused
			r.c.Refused++
			r.emitEnd(s)
			return
		}
		if packets*tpBytesPerDT < size {
			// More bytes announced than the packets can carry: deliver
			// what the packets hold, and count the inconsistency.
			r.c.ShortPackets++
		}
		ns := r.alloc()
		ns.Session = s
		ns.last = t
		r.open[k] = ns
	case cmCTS:
		r.c.CTS++
		// A CTS goes from the receiver back to the sender.
		if s := r.open[tpKey{da, sa}]; s != nil {
			s.last = t
		}
	case cmEoMA:
		r.c.EoMA++
	case cmAbort:
		r.c.Abort++
		k := tpKey{sa, da}
		s := r.open[k]
		if s == nil {
			k = tpKey{da, sa}
			s = r.open[k]
		}
		if s == nil {
			r.c.AbortUnmatched++
			return
		}
		s.AbortReason = d[1]
		r.end(k, s, TPAborted, t)
	default:
		r.c.OtherCM++
	}
}

// dt handles one TP.DT frame from sa to da.
func (r *reassembler) dt(t time.Time, sa, da uint8, d []byte) {
	k := tpKey{sa, da}
	s := r.open[k]
	if s == nil {
		r.c.OrphanDT++
		return
	}
	// Any DT of the session keeps it alive, even one out of range: a
	// sender told by a (malicious) CTS to send packets 6..255 is still
	// talking, and the in-range ones may yet come.
	s.last = t
	if len(d) < 2 {
		r.c.BadSequence++
		return
	}
	seq := int(d[0])
	if seq < 1 || seq > s.Packets {
		r.c.BadSequence++
		return
	}
	word, bit := (seq-1)/64, uint64(1)<<((seq-1)%64)
	if s.seen[word]&bit != 0 {
		r.c.DuplicateDT++
		return
	}
	s.seen[word] |= bit
	s.Received++
	off := (seq - 1) * tpBytesPerDT
	copy(s.buf[off:min(off+tpBytesPerDT, MaxTPSize)], d[1:])
	if s.Received < s.Packets {
		return
	}
	if r.onMessage != nil {
		r.onMessage(t, s.PGN, s.SA, s.DA, s.buf[:min(s.Size, s.Packets*tpBytesPerDT)], s.Kind)
	}
	r.end(k, s, TPComplete, t)
}

// sweep ends sessions whose timeout has passed at bus time now.
// Between sweeps now is compared with both ends of the interval, not
// subtracted: Time.Sub, run per frame, cost more than the sweeps.
func (r *reassembler) sweep(now time.Time) {
	if now.Before(r.nextSweep) && !now.Before(r.lastSweep) {
		return
	}
	r.lastSweep, r.nextSweep = now, now.Add(sweepEvery)
	for k, s := range r.open {
		limit := TimeoutT1 + observerGrace
		if s.Kind == ViaRTS {
			limit = TimeoutT2 + observerGrace
		}
		if now.Sub(s.last) > limit {
			r.end(k, s, TPTimedOut, s.last.Add(limit))
		}
	}
}

// flush ends every open session as it stands, for a finished capture.
func (r *reassembler) openSessions(fn func(Session)) {
	for _, s := range r.open {
		fn(s.Session)
	}
}

func (r *reassembler) end(k tpKey, s *tpSession, st TPStatus, t time.Time) {
	s.Status = st
	s.End = t
	switch st {
	case TPComplete:
		r.c.Complete++
		if s.Kind == ViaBAM {
			r.c.CompleteBAM++
		} else {
			r.c.CompleteRTS++
		}
	case TPAborted:
		r.c.Aborted++
	case TPTimedOut:
		r.c.TimedOut++
	case TPSuperseded:
		r.c.Superseded++
	}
	r.emitEnd(s.Session)
	delete(r.open, k)
	r.free = append(r.free, s)
}

func (r *reassembler) emitEnd(s Session) {
	if r.onEnd != nil {
		r.onEnd(s)
	}
}

func (r *reassembler) alloc() *tpSession {
	if n := len(r.free); n > 0 {
		s := r.free[n-1]
		r.free = r.free[:n-1]
		s.seen = [4]uint64{}
		return s
	}
	return new(tpSession)
}
