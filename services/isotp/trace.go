package isotp

import (
	"fmt"
	"math"
	"slices"
	"time"

	"fieldtap/drivers/wire"
)

// Trace bounds and timing.
const (
	// TimeoutP2Star bounds the wait for an answer: P2*server_max, 5000 ms
	// by default (ISO 14229-2), restarted by every "response pending"
	// (NRC 0x78). A listener waits this long, plus observerGrace, before it
	// calls a request unanswered.
	TimeoutP2Star = 5000 * time.Millisecond
	// MaxOutstanding bounds the requests waiting for an answer at once;
	// a tester has one per ECU, a functional scan a few dozen.
	MaxOutstanding = 64
	// MaxResponses bounds the answers kept per request: pendings, the
	// final answer, and the several ECUs that answer a functional request.
	MaxResponses = 8
	// MaxShownBytes bounds the hex shown for one message; Length stays whole.
	MaxShownBytes = 256
	// msDigits rounds the milliseconds shown to the microseconds a capture
	// timestamp carries.
	msDigits = 1000
	// maxUnpaired is how many transactions a channel may end before any
	// of them was answered from (or answered) another id: a tester whose
	// ECU is slow to wake retries a few times, and a window opening inside
	// a session starts with a few answers to requests it missed. A
	// channel past it is rejected as unpaired and what it held dropped.
	maxUnpaired = 8
	// maxHeld bounds the transactions a tracer holds for channels not yet
	// paired, across channels: a few testers' first exchanges. At about
	// transactionBytes each that is ~100 kB a port.
	maxHeld = 64
)

// Transaction statuses.
const (
	StatusPositive   = "positive"
	StatusNegative   = "negative"
	StatusNoResponse = "no_response"
	// StatusSuppressed: the request set the suppress-positive-response bit
	// and no answer came, as it asked.
	StatusSuppressed = "suppressed"
	// StatusOpen: the window ended while the answer was still due.
	StatusOpen = "open_at_end"
	// StatusUnmatched: an answer whose request was not seen (before the
	// window, or on an id the listener does not read).
	StatusUnmatched = "unmatched_response"
)

// Message is one side of an exchange as it crossed the bus.
type Message struct {
	// Seq is the caller's number of the message's first frame.
	Seq        uint64
	Time       time.Time // first frame
	End        time.Time // last frame
	CANID      string
	Addressing string
	// Source and Target are the addresses in a normal-fixed id; Target is
	// N_TA under extended addressing. Nil where the format has none.
	Source     *int
	Target     *int
	Functional bool
	Frames     int
	Length     int
	Data       string // hex, at most MaxShownBytes
	Truncated  bool
	Notes      Notes
}

// Answer is one response to a request.
type Answer struct {
	Message
	Positive bool
	// Pending is NRC 0x78: the ECU asks for more time.
	Pending bool
	NRC     string
	NRCName string
	// AfterMs is the time from the request's last frame to this answer's
	// first, in milliseconds; nil for an answer with no request.
	AfterMs *float64
}

// Transaction is one request and its answers, or an answer alone.
type Transaction struct {
	// ID is the Seq of the request's first frame (the answer's, for an
	// unmatched answer): unique per port, stable across reads.
	ID     uint64
	Status string
	// SID is the request's service id (the one answered, for an answer).
	SID             uint8
	Service         string // "" when the reference table has no name
	SubFunction     *int
	SubFunctionName string
	// SuppressPositive is the sub-function's bit 7: no positive answer wanted.
	SuppressPositive bool
	// DID is the identifier the exchange addresses (Identify), in hex
	// ("0xF190"): the request's, or the answer's when the request was not
	// seen. DIDs lists every one when a request names several (at most
	// MaxDIDs, DIDsDropped counts the rest); DIDName is a standard DID's
	// name, DIDKind what the identifier is.
	DID            string
	DIDs           []string
	DIDsDropped    int
	DIDName        string
	DIDKind        string
	Request        *Message
	Responses      []Answer
	Dropped        int // beyond MaxResponses
	Pending        int
	ResponseMs     *float64 // request end → final answer start
	ResponseReason string
	NRC            string
	NRCName        string
	Session        *int
	DataHex        string
	// Text is the answer's data as printable ASCII (a VIN, a part
	// number): written by the ECU, so whoever shows it fences it.
	Text     string
	DTCCount *int
	DTCs     []DTC
	// Problem says what about the exchange did not follow the standard.
	Problem string
}

// TraceCounters are a tracer's totals over the transactions it reported:
// those of diagnostic channels (a request and its answer crossed between
// them and another id). Rejected counts the transactions it did not.
type TraceCounters struct {
	Requests           uint64
	Positive           uint64
	Negative           uint64
	NoResponse         uint64
	Suppressed         uint64
	Open               uint64
	Unmatched          uint64
	PendingAnswers     uint64
	ResponsesDropped   uint64
	OutstandingDropped uint64 // requests ended at MaxOutstanding
	Malformed          uint64 // empty, or a negative answer under 3 bytes
	// Rejected counts transactions not reported because their channel
	// was rejected (not ISO-TP, both ways, or unpaired).
	Rejected uint64
}

type pending struct {
	tx       Transaction
	reqRaw   []byte
	ch       Channel
	end      time.Time // request's last frame
	deadline time.Time
	final    bool
	finalRaw []byte
}

// Tracer pairs the UDS (and KWP2000, OBD-II) requests and answers it
// overhears. Not safe for concurrent use: one goroutine feeds one bus.
type Tracer struct {
	ob   *Observer
	open []*pending
	next time.Time // earliest deadline of open
	c    TraceCounters
	// held are the ended transactions of channels not yet paired, in
	// the order they ended; nHeld counts them across channels.
	held  map[*channel][]Transaction
	nHeld int
	// OnTransaction, if set, receives every transaction as it ends.
	OnTransaction func(*Transaction)
}

// NewTracer checks o and returns a tracer with its own Observer; the
// observer's OnIncomplete is the caller's to set.
func NewTracer(o Options) (*Tracer, error) {
	ob, err := NewObserver(o)
	if err != nil {
		return nil, err
	}
	tr := &Tracer{ob: ob, held: map[*channel][]Transaction{}}
	ob.OnPDU = tr.pdu
	ob.onReject = tr.rejected
	return tr, nil
}

// Observer is the transport under the tracer.
func (tr *Tracer) Observer() *Observer { return tr.ob }

// Counters returns the totals so far.
func (tr *Tracer) Counters() TraceCounters { return tr.c }

// Outstanding is the number of requests still waiting for an answer.
func (tr *Tracer) Outstanding() int { return len(tr.open) }

// Held is the number of ended transactions held until their channel is
// seen in an answered exchange.
func (tr *Tracer) Held() int { return tr.nHeld }

// Rejections lists the channels not taken for diagnostic ones.
func (tr *Tracer) Rejections() []Rejection { return tr.ob.Rejections() }

// Feed reads one data frame; see Observer.Feed.
func (tr *Tracer) Feed(seq uint64, t time.Time, id uint32, data []byte) {
	if len(tr.open) > 0 && t.After(tr.next) {
		tr.expire(t)
	}
	tr.ob.Feed(seq, t, id, data)
}

// Flush ends open transfers and requests at t (the window's end); a
// channel still holding transactions then was never paired, and is
// rejected as unpaired.
func (tr *Tracer) Flush(t time.Time) {
	tr.ob.Flush(t)
	tr.expire(t)
	for len(tr.open) > 0 {
		tr.finish(0, StatusOpen, "", t)
	}
	for _, ch := range tr.ob.order {
		if len(tr.held[ch]) > 0 {
			tr.unpair(ch, t)
		}
	}
}

func (tr *Tracer) pdu(p *PDU) {
	if len(p.Data) == 0 {
		tr.c.Malformed++
		return
	}
	sid := p.Data[0]
	if sid == SIDNegative && len(p.Data) < 3 {
		tr.c.Malformed++
		return
	}
	dir := dirRequest
	if sid == SIDNegative || sid&positiveBit != 0 {
		dir = dirAnswer
	}
	if ch := tr.ob.lookup(p.Channel); ch != nil {
		if ch.dirs |= uint8(dir); ch.dirs == dirRequest|dirAnswer {
			tr.ob.reject(ch, RejectBothWays, p.End)
			return
		}
	}
	switch {
	case sid == SIDNegative:
		tr.answer(p, p.Data[1])
	case dir == dirAnswer:
		tr.answer(p, sid-positiveOffset)
	default:
		tr.request(p)
	}
}

func (tr *Tracer) request(p *PDU) {
	// One request at a time per tester channel (ISO 14229-2): a new one
	// ends the last, answered (a functional request's responders) or not.
	for i, q := range tr.open {
		if q.ch != p.Channel {
			continue
		}
		status, why := "", ""
		switch {
		case q.final:
		case q.tx.SuppressPositive:
			status = StatusSuppressed
		default:
			status, why = StatusNoResponse, "a new request from the same tester came before any answer"
		}
		tr.finish(i, status, why, p.Start)
		break
	}
	if len(tr.open) >= MaxOutstanding {
		tr.c.OutstandingDropped++
		tr.finish(0, StatusNoResponse, fmt.Sprintf("more than %d requests were waiting at once: the oldest was given up", MaxOutstanding), p.Start)
	}
	q := &pending{ch: p.Channel, end: p.End, deadline: p.End.Add(TimeoutP2Star + observerGrace), reqRaw: slices.Clone(p.Data)}
	m := message(p)
	q.tx = Transaction{ID: p.FirstSeq, Request: &m, Responses: []Answer{}}
	describe(&q.tx, p.Data)
	tr.open = append(tr.open, q)
	tr.next = minDeadline(tr.open)
}

func (tr *Tracer) answer(p *PDU, reqSID byte) {
	i := tr.match(p.Channel, reqSID)
	a := Answer{Message: message(p), Positive: p.Data[0] != SIDNegative}
	if !a.Positive {
		a.NRC, a.NRCName = Hex8(p.Data[2]), NRCName(p.Data[2])
		a.Pending = p.Data[2] == nrcResponsePending
	}
	if i < 0 {
		tx := Transaction{ID: p.FirstSeq, Status: StatusUnmatched, SID: reqSID, Service: ServiceName(reqSID), Responses: []Answer{a},
			ResponseReason: "the request was not seen: it came before the window, or on an id this trace does not read"}
		identify(&tx, p.Data)
		if !a.Positive {
			tx.NRC, tx.NRCName = a.NRC, a.NRCName
		}
		tr.settle(&tx, p.Channel, p.End)
		return
	}
	q := tr.open[i]
	tr.ob.LinkChannels(q.ch, p.Channel)
	// An answer from another id to a request: both ends are diagnostic.
	tr.confirm(q.ch)
	tr.confirm(p.Channel)
	after := roundMs(p.Start.Sub(q.end))
	a.AfterMs = &after
	if len(q.tx.Responses) < MaxResponses {
		q.tx.Responses = append(q.tx.Responses, a)
	} else {
		q.tx.Dropped++
	}
	if a.Pending {
		q.tx.Pending++
		q.deadline = p.End.Add(TimeoutP2Star + observerGrace)
		tr.next = minDeadline(tr.open)
		return
	}
	if !q.final {
		q.final, q.finalRaw = true, slices.Clone(p.Data)
		q.tx.ResponseMs = &after
	}
	if !q.ch.Functional {
		tr.finish(i, "", "", p.End)
	}
}

// match finds the waiting request that resp answers: same service,
// another channel, the same id format (an ECU answers 11-bit requests on
// 11-bit ids, normal fixed ones on normal fixed ids), and the addresses
// (normal fixed) or the learned peers agree: a physical tester id talks
// to one ECU id, both ways. Of several, the oldest physical request, else
// the oldest functional one: a functional request stays open for more
// ECUs to answer (an OBD scan tool's 0x7DF), and a physical request sent
// meanwhile to the same service is the one its ECU answers. -1 when none
// does.
func (tr *Tracer) match(resp Channel, sid byte) int {
	peer, known := tr.ob.Peer(resp)
	best := -1
	for i, q := range tr.open {
		if q.tx.SID != sid || q.ch == resp || (q.ch.Addressing == AddrNormalFixed) != (resp.Addressing == AddrNormalFixed) {
			continue
		}
		if best >= 0 && (q.ch.Functional || !tr.open[best].ch.Functional) {
			continue // best is older and physical, or q no better
		}
		qpeer, qknown := tr.ob.Peer(q.ch)
		switch {
		case q.ch.Addressing == AddrNormalFixed && resp.Addressing == AddrNormalFixed:
			if resp.Target != q.ch.Source || (!q.ch.Functional && resp.Source != q.ch.Target) {
				continue
			}
		case known && !q.ch.Functional && peer != q.ch:
			continue
		case qknown && !q.ch.Functional && qpeer != resp:
			continue
		case q.final && !q.ch.Functional:
			continue
		}
		best = i
	}
	return best
}

// finish ends open[i] with status ("" decides from the final answer) at
// bus time at.
func (tr *Tracer) finish(i int, status, why string, at time.Time) {
	q := tr.open[i]
	tr.open = slices.Delete(tr.open, i, i+1)
	tr.next = minDeadline(tr.open)
	tx := &q.tx
	if q.final {
		r := Decode(q.reqRaw, q.finalRaw)
		status = StatusNegative
		if r.Positive {
			status = StatusPositive
		}
		tx.NRC, tx.NRCName, tx.Session, tx.DataHex, tx.DTCCount, tx.DTCs = r.NRC, r.NRCName, r.Session, r.DataHex, r.DTCCount, r.DTCs
		tx.Text, tx.Problem = r.DataText, r.Problem
	} else if tx.ResponseMs == nil {
		tx.ResponseReason = "no final answer was seen"
		if why != "" {
			tx.ResponseReason = why
		}
	}
	tx.Status = status
	tr.settle(tx, q.ch, at)
}

// settle decides an ended transaction by its own channel (the request's,
// or an unmatched answer's): reported when the channel is diagnostic,
// held while it is a candidate, dropped once it was rejected.
func (tr *Tracer) settle(tx *Transaction, c Channel, at time.Time) {
	ch := tr.ob.lookup(c)
	switch {
	case ch == nil || ch.verdict == diagnostic:
		tr.release(tx)
	case ch.verdict != candidate:
		tr.c.Rejected++
	case len(tr.held[ch]) >= maxUnpaired || tr.nHeld >= maxHeld:
		tr.unpair(ch, at)
		tr.c.Rejected++
	default:
		tr.held[ch] = append(tr.held[ch], *tx)
		tr.nHeld++
	}
}

// confirm makes c's channel diagnostic and reports what it held, in the
// order it ended. A channel rejected as not ISO-TP or both ways stays so.
func (tr *Tracer) confirm(c Channel) {
	ch := tr.ob.lookup(c)
	if ch == nil || ch.verdict == diagnostic || ch.verdict == rejected {
		return
	}
	ch.verdict = diagnostic
	held := tr.held[ch]
	delete(tr.held, ch)
	tr.nHeld -= len(held)
	for i := range held {
		tr.release(&held[i])
	}
}

// unpair rejects ch as unpaired at at and drops what it held.
func (tr *Tracer) unpair(ch *channel, at time.Time) {
	ch.verdict, ch.reason, ch.since = unpaired, RejectUnpaired, at
	tr.drop(ch)
}

// rejected hears that the observer stopped reading ch: what it held and
// its requests still waiting are dropped.
func (tr *Tracer) rejected(ch *channel) {
	tr.drop(ch)
	tr.open = slices.DeleteFunc(tr.open, func(q *pending) bool {
		if tr.ob.lookup(q.ch) == ch {
			tr.c.Rejected++
			return true
		}
		return false
	})
	tr.next = minDeadline(tr.open)
}

func (tr *Tracer) drop(ch *channel) {
	n := len(tr.held[ch])
	delete(tr.held, ch)
	tr.nHeld -= n
	tr.c.Rejected += uint64(n)
}

// release reports tx and counts it.
func (tr *Tracer) release(tx *Transaction) {
	if tx.Request != nil {
		tr.c.Requests++
	}
	switch tx.Status {
	case StatusPositive:
		tr.c.Positive++
	case StatusNegative:
		tr.c.Negative++
	case StatusNoResponse:
		tr.c.NoResponse++
	case StatusSuppressed:
		tr.c.Suppressed++
	case StatusOpen:
		tr.c.Open++
	case StatusUnmatched:
		tr.c.Unmatched++
	}
	tr.c.PendingAnswers += uint64(tx.Pending)
	tr.c.ResponsesDropped += uint64(tx.Dropped)
	if tr.OnTransaction != nil {
		tr.OnTransaction(tx)
	}
}

// expire ends the requests whose answer is overdue at t.
func (tr *Tracer) expire(t time.Time) {
	for i := 0; i < len(tr.open); {
		q := tr.open[i]
		if !t.After(q.deadline) {
			i++
			continue
		}
		status := StatusNoResponse
		if q.tx.SuppressPositive && !q.final {
			status = StatusSuppressed
		}
		tr.finish(i, status, "", t)
	}
}

func minDeadline(open []*pending) time.Time {
	var m time.Time
	for i, q := range open {
		if i == 0 || q.deadline.Before(m) {
			m = q.deadline
		}
	}
	return m
}

// describe fills the request's service, sub-function and identifier.
func describe(tx *Transaction, req []byte) {
	sid := req[0]
	tx.SID, tx.Service = sid, ServiceName(sid)
	info, _ := Service(sid)
	if rest := req[1:]; info.SubFunction && len(rest) > 0 {
		sub := int(rest[0] &^ suppressPositiveReply)
		tx.SubFunction, tx.SubFunctionName = &sub, SubFunctionName(sid, rest[0])
		tx.SuppressPositive = rest[0]&suppressPositiveReply != 0
	}
	identify(tx, req)
}

// identify fills the transaction's DID from a request or, for an answer
// whose request was not seen, from the answer.
func identify(tx *Transaction, pdu []byte) {
	id := Identify(pdu)
	if len(id.Values) == 0 {
		return
	}
	tx.DIDKind, tx.DID, tx.DIDsDropped = id.Kind, id.Hex(id.Values[0]), id.Dropped
	if id.Kind == KindDID {
		tx.DIDName = DIDName(uint16(id.Values[0]))
	}
	if len(id.Values) > 1 {
		tx.DIDs = make([]string, len(id.Values))
		for i, v := range id.Values {
			tx.DIDs[i] = id.Hex(v)
		}
	}
}

// message is the bus view of a PDU.
func message(p *PDU) Message {
	n := min(len(p.Data), MaxShownBytes)
	m := Message{Seq: p.FirstSeq, Time: p.Start, End: p.End, CANID: wire.FormatCANID(p.Channel.ID),
		Addressing: p.Channel.Addressing.String(), Functional: p.Channel.Functional, Frames: p.Frames,
		Length: len(p.Data), Data: fmt.Sprintf("%X", p.Data[:n]), Truncated: n < len(p.Data), Notes: p.Notes}
	switch p.Channel.Addressing {
	case AddrNormalFixed:
		s, t := int(p.Channel.Source), int(p.Channel.Target)
		m.Source, m.Target = &s, &t
	case AddrExtended:
		t := int(p.Channel.Target)
		m.Target = &t
	}
	return m
}

func roundMs(d time.Duration) float64 {
	return math.Round(float64(d)/float64(time.Millisecond)*msDigits) / msDigits
}
