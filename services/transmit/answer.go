package transmit

import (
	"errors"
	"fmt"
	"time"

	"fieldtap/drivers/wire"
	"fieldtap/services/isotp"
	"fieldtap/services/j1939"
)

// Expectation kinds.
const (
	ExpectJ1939 = "j1939"
	ExpectUDS   = "uds"
)

// UDS timing (ISO 14229-2): P2*, the extended wait after NRC 0x78.
const udsP2Star = 5 * time.Second

// maxAnswers bounds what one plan collects (a global request on a busy
// truck may be answered by every ECU).
const maxAnswers = 32

// pgnAck is the J1939 Acknowledgment PGN; control byte 1 is a NACK.
const (
	pgnAck  = 59392
	ackNACK = 1
)

// Answer is one reply an ECU sent to the plan. Text is ECU-supplied and
// must be fenced by whoever shows it to a model.
type Answer struct {
	Time time.Time
	From string // J1939 source address or UDS response id, hex
	PGN  uint32
	Via  string // direct, tp-BAM, tp-RTS, isotp
	Data string
	Text string
	// NACK is set for a J1939 negative acknowledgement of the request.
	NACK bool
	UDS  *isotp.Response
	// Step is the frame number (1-based) a scan's answer answers; 0 for
	// a plan that listens once after its frames.
	Step int
}

// errNoAnswer is a listen that ended with nothing heard.
var errNoAnswer = errors.New("no answer")

// listening matches received frames against the plan's expectation.
type listening struct {
	e       *Expect
	dec     *j1939.Decoder
	rsm     isotp.Reassembler
	answers []Answer
	seen    int
	prob    string
}

type action struct {
	flowControl bool
	done        bool
	extend      time.Duration
}

func newListening(e *Expect) *listening {
	l := &listening{e: e, answers: []Answer{}}
	if e != nil && e.Kind == ExpectJ1939 {
		l.dec = j1939.NewDecoder()
		l.dec.OnMessage = l.j1939
	}
	return l
}

func (l *listening) feed(f RxFrame) action {
	l.seen++
	if l.e == nil {
		return action{}
	}
	switch l.e.Kind {
	case ExpectJ1939:
		if f.ID&wire.CANEFF != 0 {
			before := len(l.answers)
			l.dec.Feed(f.Time, f.ID&wire.CANEFFMask, true, f.Data)
			// A directed request has one answerer: stop at its answer.
			return action{done: len(l.answers) > before && l.e.From != j1939.AddrGlobal}
		}
	case ExpectUDS:
		if f.ID != l.e.ResponseID {
			return action{}
		}
		res, err := l.rsm.Feed(f.Data)
		if err != nil {
			l.prob = err.Error()
			return action{}
		}
		if res.NeedFlowControl {
			return action{flowControl: true}
		}
		if res.Payload == nil {
			return action{}
		}
		r := isotp.Decode(l.e.Request, res.Payload)
		l.add(Answer{Time: f.Time, From: Frame{ID: f.ID}.IDHex(), Via: "isotp", Data: r.Raw, Text: r.DataText, UDS: &r})
		if r.Pending {
			return action{extend: udsP2Star}
		}
		return action{done: true}
	}
	return action{}
}

func (l *listening) j1939(m *j1939.Message) {
	if l.e.From != j1939.AddrGlobal && m.ID.SA != l.e.From {
		return
	}
	if m.ID.PGN == pgnAck && len(m.Data) >= 8 {
		// An Acknowledgment names the PGN it answers in bytes 5..7.
		if pgn := uint32(m.Data[5]) | uint32(m.Data[6])<<8 | uint32(m.Data[7])<<16; pgn == l.e.PGN {
			l.add(Answer{Time: m.Time, From: fmt.Sprintf("%02X", m.ID.SA), PGN: pgnAck, Via: m.Via.String(), Data: fmt.Sprintf("%X", m.Data), NACK: m.Data[0] == ackNACK})
		}
		return
	}
	if m.ID.PGN != l.e.PGN {
		return
	}
	a := Answer{Time: m.Time, From: fmt.Sprintf("%02X", m.ID.SA), PGN: m.ID.PGN, Via: m.Via.String(), Data: fmt.Sprintf("%X", m.Data)}
	text := m.Data // padding trimmed byte by byte: 0xFF is no UTF-8, so no cutset can name it
	for n := len(text); n > 0 && (text[n-1] == '*' || text[n-1] == 0 || text[n-1] == 0xFF); n-- {
		text = text[:n-1]
	}
	if t := string(text); isPrintable(t) {
		a.Text = t
	}
	l.add(a)
}

func (l *listening) add(a Answer) {
	if len(l.answers) < maxAnswers {
		l.answers = append(l.answers, a)
	}
}

func (l *listening) silence() string {
	if l.prob != "" {
		return "the answer could not be reassembled: " + l.prob
	}
	return fmt.Sprintf("%d other frames seen; the ECU may be absent, asleep, or not support the request", l.seen)
}

func isPrintable(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		if c < 0x20 || c > 0x7E {
			return false
		}
	}
	return true
}
