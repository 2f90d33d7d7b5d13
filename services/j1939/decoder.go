package j1939

import "time"

// Message is one J1939 message: a single-frame PGN or a reassembled
// transfer. Data aliases the decoder's memory and is valid only during the
// callback that receives it.
type Message struct {
	Time time.Time
	ID   ID // for a transfer: the transferred PGN, the session's SA and DA
	Data []byte
	Via  TPKind
}

// Decoder turns one port's frames into Messages and TP sessions. It is not
// safe for concurrent use: one goroutine feeds one port.
type Decoder struct {
	// OnMessage, if set, receives every message, TP.CM/TP.DT frames
	// included (Via direct) before they are reassembled.
	OnMessage func(*Message)
	// OnSession, if set, receives every transfer as it ends.
	OnSession func(Session)

	tp  reassembler
	mpg MultiPGCounters
	msg Message
	// Frames counts extended frames decoded; Standard counts 11-bit frames
	// that J1939 does not define and were skipped.
	Frames, Standard uint64
}

// NewDecoder returns a decoder with no open sessions.
func NewDecoder() *Decoder {
	d := &Decoder{tp: newReassembler()}
	d.tp.onEnd = func(s Session) {
		if d.OnSession != nil {
			d.OnSession(s)
		}
	}
	d.tp.onMessage = d.transfer
	return d
}

// Feed decodes one frame seen at t. id is the 11- or 29-bit identifier
// without flag bits; ext says which. Remote and error frames must not be fed.
func (d *Decoder) Feed(t time.Time, id uint32, ext bool, data []byte) {
	if !ext {
		d.Standard++
		return
	}
	d.Frames++
	d.tp.sweep(t)
	// Field by field in place: a Message or ID built on the stack and
	// copied in stalls on the copy (narrow stores do not forward to the
	// wide loads that move it), once a frame.
	m := &d.msg
	m.Time, m.Data, m.Via = t, data, ViaDirect
	parseIDInto(id, &m.ID)
	x := &m.ID
	pgn, sa, da := x.PGN, x.SA, x.DA
	if d.OnMessage != nil {
		d.OnMessage(m)
	}
	switch pgn {
	case PGNTPCM:
		d.tp.cm(t, sa, da, data)
	case PGNTPDT:
		d.tp.dt(t, sa, da, data)
	case PGNMultiPG:
		d.multiPG(t, sa, da, data)
	case PGNFDTPCM, PGNFDTPDT:
		d.mpg.FDTP++
	}
}

func (d *Decoder) transfer(t time.Time, pgn uint32, sa, da uint8, data []byte, via TPKind) {
	if d.OnMessage == nil {
		return
	}
	m := Message{Time: t, Data: data, Via: via, ID: ID{PGN: pgn, SA: sa, DA: da, PF: uint8(pgn >> 8), DP: uint8(pgn >> 16 & 1), EDP: uint8(pgn >> 17 & 1)}}
	if m.ID.PF >= pdu2Min {
		m.ID.PS = uint8(pgn)
	} else {
		m.ID.PS = da
	}
	d.OnMessage(&m)
}

// TP returns the transport counters.
func (d *Decoder) TP() TPCounters { return d.tp.c }

// OpenSessions calls fn for each transfer still running.
func (d *Decoder) OpenSessions(fn func(Session)) { d.tp.openSessions(fn) }

// OpenCount is the number of transfers still running.
func (d *Decoder) OpenCount() int { return len(d.tp.open) }
