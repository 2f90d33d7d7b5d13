package isotp

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"fieldtap/drivers/wire"
)

// Addressing is an ISO 15765-2 addressing format (§10.3).
type Addressing uint8

// Addressing formats a listener reads.
const (
	// AddrNormal: the CAN id names the channel, the PCI is byte 0.
	AddrNormal Addressing = iota
	// AddrNormalFixed: 29-bit ids 0x18DA<TA><SA> (physical) and
	// 0x18DB<TA><SA> (functional), the J1939-style form: the addresses are
	// in the id, the PCI is byte 0.
	AddrNormalFixed
	// AddrExtended: byte 0 is the target address N_TA, the PCI byte 1.
	AddrExtended
)

func (a Addressing) String() string {
	switch a {
	case AddrNormalFixed:
		return "normal_fixed"
	case AddrExtended:
		return "extended"
	}
	return "normal"
}

// Normal fixed addressing (ISO 15765-2 §10.3.3, J1939 PGNs 0xDA00 and 0xDB00).
const (
	pfPhysical   = 0xDA
	pfFunctional = 0xDB
	// DiagRangeLow..DiagRangeHigh is where 11-bit diagnostic ids live by
	// convention (ISO 15765-4: 0x7DF functional, 0x7E0–0x7EF physical;
	// makers use the rest of 0x700–0x7FF, the Nissan Leaf 0x79B/0x7BB).
	DiagRangeLow  = 0x700
	DiagRangeHigh = 0x7FF
	// obdFunctional is the OBD functional request id (ISO 15765-4).
	obdFunctional = 0x7DF
)

// Bounds and timeouts of a listener.
const (
	// DefaultMaxChannels bounds the channels (CAN id, and the target
	// address under extended addressing) one Observer tracks. A car has a
	// few dozen diagnostic ids; a flood of new ids is refused and counted.
	DefaultMaxChannels = 512
	// MaxChannels is the largest MaxChannels accepted: every channel may
	// hold a MaxPayload buffer, so this bounds an observer at ~8 MB.
	MaxChannels = 2048
	// MaxSelected bounds Options.IDs and Options.Extended.
	MaxSelected = 1024
	// TimeoutNBs is how long a sender waits for flow control and TimeoutNCr
	// how long a receiver waits for the next consecutive frame (ISO
	// 15765-2 Table 16: 1000 ms each).
	TimeoutNBs = 1000 * time.Millisecond
	TimeoutNCr = 1000 * time.Millisecond
	// observerGrace is added to each timeout: a listener must not give up
	// before the participants do (their clocks and ours differ).
	observerGrace = 250 * time.Millisecond
	// sweepEvery is how far bus time moves between timeout sweeps.
	sweepEvery = 100 * time.Millisecond
)

// Reason says why a transfer did not complete.
type Reason uint8

// Reasons a transfer ends incomplete.
const (
	// ReasonSequence: a consecutive frame carried the wrong sequence
	// number (lost or reordered frames); the receiver aborts (§9.6.4.4).
	ReasonSequence Reason = iota
	// ReasonSuperseded: a new single or first frame on the channel
	// replaced the transfer, as a receiver must accept (§9.8.3).
	ReasonSuperseded
	// ReasonCFTimeout: no consecutive frame within N_Cr.
	ReasonCFTimeout
	// ReasonFCTimeout: no flow control within N_Bs.
	ReasonFCTimeout
	// ReasonOverflow: the receiver answered flow control "overflow".
	ReasonOverflow
	// ReasonOpenAtEnd: the window or capture ended inside the transfer.
	ReasonOpenAtEnd
	numReasons
)

var reasonNames = [numReasons]string{"sequence", "superseded", "cf_timeout", "fc_timeout", "receiver_overflow", "open_at_end"}

func (r Reason) String() string {
	if r < numReasons {
		return reasonNames[r]
	}
	return "unknown"
}

// RejectReason says why a channel was not taken for a diagnostic one.
// Ids in the diagnostic range also carry other traffic (a car's periodic
// broadcast on 0x7BC looks like single frames), so a channel counts as
// diagnostic only once a request and its answer crossed between it and
// another id (docs/uds.md).
type RejectReason uint8

// Reasons a channel is rejected.
const (
	// RejectNotISOTP: it sent a frame whose protocol control information
	// no ISO-TP sender writes. Its frames are no longer read.
	RejectNotISOTP RejectReason = iota
	// RejectBothWays: it sent requests and answers; a tester and its ECU
	// never share an id. Its frames are no longer read.
	RejectBothWays
	// RejectUnpaired: none of its requests was answered from another id,
	// and none of its answers matched a request, within maxUnpaired
	// exchanges or the window. It is still read: a later answered
	// exchange makes it diagnostic, though what it said before is lost.
	RejectUnpaired
	numRejects
)

var rejectNames = [numRejects]string{"not_isotp", "both_ways", "unpaired"}

var rejectWhy = [numRejects]string{
	"it sent a frame that is not ISO-TP",
	"it sent both requests and answers, as no tester or ECU does",
	"no request or answer of it was paired with another id",
}

func (r RejectReason) String() string {
	if r < numRejects {
		return rejectNames[r]
	}
	return "unknown"
}

// Why says the reason in words for a person.
func (r RejectReason) Why() string {
	if r < numRejects {
		return rejectWhy[r]
	}
	return "unknown"
}

// verdict is what the listener holds a channel for.
type verdict uint8

const (
	// candidate: not yet in an answered exchange; a Tracer holds its
	// transactions until it is (or is not).
	candidate verdict = iota
	// diagnostic: a request and its answer crossed between it and
	// another id.
	diagnostic
	// unpaired: rejected (RejectUnpaired) but still read.
	unpaired
	// rejected: its frames are no longer read.
	rejected
)

// Rejection is one channel the listener did not take for a diagnostic one.
type Rejection struct {
	Channel Channel
	Reason  RejectReason
	// Since is the bus time of the verdict.
	Since time.Time
	// Frames counts the channel's frames, before and after the verdict.
	Frames uint64
}

// RejectedByReason counts rs by reason, every reason present.
func RejectedByReason(rs []Rejection) map[string]uint64 {
	m := make(map[string]uint64, numRejects)
	for r := range numRejects {
		m[r.String()] = 0
	}
	for _, r := range rs {
		m[r.Reason.String()]++
	}
	return m
}

// Channel is one sender of ISO-TP frames.
type Channel struct {
	// ID is the CAN id with wire.CANEFF for a 29-bit id.
	ID         uint32
	Addressing Addressing
	// Target is N_TA: the byte before the PCI under extended addressing,
	// the id's PS byte under normal fixed addressing.
	Target uint8
	// Source is N_SA under normal fixed addressing (the id's low byte).
	Source uint8
	// Functional is true for a request to every ECU (0x7DF, 0x18DB…).
	Functional bool
}

// PDU is one reassembled message. Data aliases the observer's buffer and
// is valid only during the callback that receives it.
type PDU struct {
	Channel    Channel
	Start, End time.Time
	// FirstSeq and LastSeq are the caller's sequence numbers of the first
	// and last frame (a ring position), so a PDU can be found again.
	FirstSeq, LastSeq uint64
	Frames            int
	Data              []byte
	// Notes are flow-control rules the sender broke, counted per PDU.
	Notes Notes
}

// Notes count flow-control rules one transfer broke; the transfer still
// completes, since a listener cannot make a sender wait.
type Notes struct {
	// BeforeFlowControl: consecutive frames sent before any flow control.
	BeforeFlowControl int
	// BlockExceeded: consecutive frames beyond the block size granted.
	BlockExceeded int
	// STmin: consecutive frames closer than the separation time granted.
	STmin int
	// Waits: flow control frames with status WAIT.
	Waits int
}

// Incomplete is a transfer that ended without its last byte.
type Incomplete struct {
	Channel    Channel
	Reason     Reason
	Start, End time.Time
	FirstSeq   uint64
	Frames     int
	Announced  int // bytes the first frame announced
	Received   int // bytes that arrived
	// Expected and Got are the sequence numbers of a ReasonSequence end.
	Expected, Got int
}

// Counters are an observer's totals.
type Counters struct {
	Frames      uint64 // selected frames read
	Single      uint64
	First       uint64
	Consecutive uint64
	FlowControl uint64
	PDUs        uint64
	// Incomplete counts ended transfers by reason.
	Incomplete [numReasons]uint64
	// OrphanCF counts consecutive frames outside any transfer (after a
	// sequence error, or whose first frame was never seen).
	OrphanCF uint64
	// UnmatchedFC counts flow control that no waiting sender could take.
	UnmatchedFC uint64
	// BadPCI counts selected frames that are not ISO-TP.
	BadPCI uint64
	// ChannelOverflow counts frames of a new channel refused at MaxChannels.
	ChannelOverflow uint64
	// RejectedFrames counts frames of channels rejected as not ISO-TP or
	// as sending both ways: selected (counted in Frames), not read.
	RejectedFrames uint64
	Notes          Notes
}

// IncompleteByReason spells Incomplete for a reader.
func (c Counters) IncompleteByReason() map[string]uint64 {
	m := make(map[string]uint64, numReasons)
	for r, n := range c.Incomplete {
		m[Reason(r).String()] = n
	}
	return m
}

// Options select what a listener reads.
type Options struct {
	// IDs are the CAN ids (wire.CANEFF set for 29-bit) read as ISO-TP.
	// Empty selects the conventional ones: 11-bit DiagRangeLow..High and
	// every 29-bit normal-fixed id (PF 0xDA, 0xDB).
	IDs []uint32
	// Extended are the ids (among the selected) that use extended
	// addressing: a target address byte before the PCI.
	Extended []uint32
	// MaxChannels bounds the channels; 0 means DefaultMaxChannels.
	MaxChannels int
}

// ErrOptions is wrapped by every refusal of Options.
var ErrOptions = errors.New("isotp: options")

func (o Options) check() (Options, error) {
	switch {
	case o.MaxChannels == 0:
		o.MaxChannels = DefaultMaxChannels
	case o.MaxChannels < 1 || o.MaxChannels > MaxChannels:
		return o, fmt.Errorf("%w: max channels %d: want 1..%d", ErrOptions, o.MaxChannels, MaxChannels)
	}
	if len(o.IDs) > MaxSelected || len(o.Extended) > MaxSelected {
		return o, fmt.Errorf("%w: %d ids and %d extended ids: at most %d each", ErrOptions, len(o.IDs), len(o.Extended), MaxSelected)
	}
	for _, id := range slices.Concat(o.IDs, o.Extended) {
		if id&(wire.CANRTR|wire.CANERR) != 0 || (id&wire.CANEFF == 0 && id > wire.CANSFFMask) {
			return o, fmt.Errorf("%w: id %#x is not a CAN data frame id (29-bit ids carry wire.CANEFF)", ErrOptions, id)
		}
	}
	for _, id := range o.Extended {
		if len(o.IDs) > 0 && !slices.Contains(o.IDs, id) {
			return o, fmt.Errorf("%w: extended id %s is not among the selected ids", ErrOptions, wire.FormatCANID(id))
		}
	}
	o.IDs, o.Extended = slices.Clone(o.IDs), slices.Clone(o.Extended)
	slices.Sort(o.IDs)
	slices.Sort(o.Extended)
	return o, nil
}

// chanKey is the CAN id (with flags) and, for extended addressing, N_TA.
type chanKey uint64

func keyOf(id uint32, ta uint8) chanKey { return chanKey(id)<<8 | chanKey(ta) }

// channel is one sender's state.
type channel struct {
	Channel
	key  chanKey
	peer *channel // the other end, learned from flow control or a UDS answer

	busy     bool
	want     int
	buf      []byte
	sn       int // next expected sequence number
	frames   int
	start    time.Time
	last     time.Time // last frame of the transfer or flow control for it
	firstSeq uint64
	// Flow control as the receiver last granted it.
	awaitFC   bool // the sender must wait for flow control now
	sawFC     bool
	blockSize int
	inBlock   int
	stMin     time.Duration
	lastCF    time.Time
	notes     Notes
	// What the listener holds the channel for, and since when.
	verdict verdict
	reason  RejectReason
	since   time.Time
	seen    uint64 // frames of the channel, read or not
	// dirs has dirRequest and dirAnswer for the PDUs it sent.
	dirs uint8
}

// Directions a channel's PDUs went.
const (
	dirRequest = 1 << iota
	dirAnswer
)

// Observer reassembles ISO-TP transfers it overhears: it sends nothing,
// so flow control is read from the receiver's frames, never answered.
// It is not safe for concurrent use: one goroutine feeds one bus.
type Observer struct {
	opts      Options
	chans     map[chanKey]*channel
	order     []*channel // creation order, so sweeps are deterministic
	lastSweep time.Time
	c         Counters
	// OnPDU, if set, receives every complete message.
	OnPDU func(*PDU)
	// OnIncomplete, if set, receives every transfer that ended short.
	OnIncomplete func(Incomplete)
	pdu          PDU
	// onReject, if set, hears that a channel stopped being read (the
	// Tracer drops what it held for it).
	onReject func(*channel)
}

// NewObserver checks o once and returns a listener with no channels.
func NewObserver(o Options) (*Observer, error) {
	o, err := o.check()
	if err != nil {
		return nil, err
	}
	return &Observer{opts: o, chans: map[chanKey]*channel{}}, nil
}

// Counters returns the totals so far.
func (ob *Observer) Counters() Counters { return ob.c }

// addressing says whether id is read and how.
func (ob *Observer) addressing(id uint32) (Addressing, bool) {
	if len(ob.opts.Extended) > 0 {
		if _, ext := slices.BinarySearch(ob.opts.Extended, id); ext {
			return AddrExtended, true
		}
	}
	if len(ob.opts.IDs) > 0 {
		if _, ok := slices.BinarySearch(ob.opts.IDs, id); !ok {
			return 0, false
		}
	}
	if id&wire.CANEFF != 0 {
		if normalFixed(id) {
			return AddrNormalFixed, true
		}
		return AddrNormal, len(ob.opts.IDs) > 0
	}
	return AddrNormal, len(ob.opts.IDs) > 0 || inDiagRange(id)
}

// normalFixed: a 29-bit id whose PF is normal fixed addressing's.
func normalFixed(id uint32) bool {
	pf := id >> 16 & 0xFF
	return pf == pfPhysical || pf == pfFunctional
}

// inDiagRange: an 11-bit id in the diagnostic range.
func inDiagRange(id uint32) bool { return id >= DiagRangeLow && id <= DiagRangeHigh }

// ignores is addressing refusing id, at a glance for a feeder's loop: no
// option selects ids, and id is neither a normal fixed 29-bit id nor an
// 11-bit id in the diagnostic range.
func (ob *Observer) ignores(id uint32) bool {
	switch {
	case len(ob.opts.IDs) > 0 || len(ob.opts.Extended) > 0:
		return false
	case id&wire.CANEFF != 0:
		return !normalFixed(id)
	}
	return !inDiagRange(id)
}

// Feed reads one data frame seen at t. id carries wire.CANEFF for a
// 29-bit id; remote and error frames must not be fed. seq is the caller's
// number for the frame, returned in PDUs and Incompletes. A frame that is
// not ISO-TP rejects its channel (RejectNotISOTP): a diagnostic sender
// never writes one, a broadcast on a diagnostic id soon does.
func (ob *Observer) Feed(seq uint64, t time.Time, id uint32, data []byte) {
	addr, ok := ob.addressing(id)
	if !ok {
		return
	}
	ob.sweep(t)
	ob.c.Frames++
	pci, size, ta := data, FrameSize, uint8(0)
	if addr == AddrExtended {
		if len(data) < 2 {
			ob.c.BadPCI++
			return
		}
		pci, size, ta = data[1:], FrameSize-1, data[0]
	}
	ch := ob.channel(id, addr, ta)
	if ch == nil {
		ob.c.ChannelOverflow++
		return
	}
	ch.seen++
	if ch.verdict == rejected {
		ob.c.RejectedFrames++
		return
	}
	f, err := parse(pci, size)
	if err != nil {
		ob.c.BadPCI++
		ob.reject(ch, RejectNotISOTP, t)
		return
	}
	switch f.Type {
	case TypeSingle:
		ob.c.Single++
		ob.supersede(ch, t)
		ob.emit(ch, t, t, seq, seq, 1, f.Data, Notes{})
	case TypeFirst:
		ob.c.First++
		ob.supersede(ch, t)
		ch.busy, ch.want, ch.sn, ch.frames = true, f.Length, 1, 1
		ch.buf = append(ch.buf[:0], f.Data...)
		ch.start, ch.last, ch.firstSeq = t, t, seq
		ch.awaitFC, ch.sawFC, ch.inBlock, ch.notes = true, false, 0, Notes{}
	case TypeConsecutive:
		ob.c.Consecutive++
		ob.consecutive(ch, seq, t, f)
	case TypeFlowControl:
		ob.c.FlowControl++
		ob.flow(ch, t, f)
	}
}

// reject stops reading ch: its transfer in progress is dropped with it,
// and whoever took it for its peer forgets it.
func (ob *Observer) reject(ch *channel, r RejectReason, t time.Time) {
	if ch.verdict == rejected {
		return
	}
	ch.verdict, ch.reason, ch.since, ch.busy = rejected, r, t, false
	if p := ch.peer; p != nil && p.peer == ch {
		p.peer = nil
	}
	ch.peer = nil
	if ob.onReject != nil {
		ob.onReject(ch)
	}
}

// Rejections lists the channels rejected so far, in the order first seen.
func (ob *Observer) Rejections() []Rejection {
	var out []Rejection
	for _, ch := range ob.order {
		if ch.verdict == rejected || ch.verdict == unpaired {
			out = append(out, Rejection{Channel: ch.Channel, Reason: ch.reason, Since: ch.since, Frames: ch.seen})
		}
	}
	return out
}

func (ob *Observer) channel(id uint32, addr Addressing, ta uint8) *channel {
	k := keyOf(id, ta)
	if ch := ob.chans[k]; ch != nil {
		return ch
	}
	if len(ob.chans) >= ob.opts.MaxChannels {
		return nil
	}
	ch := &channel{key: k, Channel: Channel{ID: id, Addressing: addr, Target: ta}}
	switch addr {
	case AddrNormalFixed:
		ch.Target, ch.Source = uint8(id>>8), uint8(id)
		ch.Functional = id>>16&0xFF == pfFunctional
	case AddrNormal:
		ch.Functional = id == obdFunctional
	}
	ob.chans[k] = ch
	ob.order = append(ob.order, ch)
	return ch
}

func (ob *Observer) consecutive(ch *channel, seq uint64, t time.Time, f Frame) {
	if !ch.busy {
		ob.c.OrphanCF++
		return
	}
	if f.Seq != ch.sn&0x0F {
		ob.end(ch, ReasonSequence, t, ch.sn&0x0F, f.Seq)
		return
	}
	switch {
	case ch.awaitFC && !ch.sawFC:
		ch.notes.BeforeFlowControl++
	case ch.awaitFC:
		ch.notes.BlockExceeded++
	case ch.inBlock > 0 && ch.stMin > 0 && t.Sub(ch.lastCF) < ch.stMin:
		ch.notes.STmin++
	}
	ch.sn++
	ch.frames++
	ch.inBlock++
	ch.last, ch.lastCF = t, t
	if ch.blockSize > 0 && ch.inBlock >= ch.blockSize {
		ch.awaitFC = true
	}
	ch.buf = append(ch.buf, f.Data[:min(len(f.Data), ch.want-len(ch.buf))]...)
	if len(ch.buf) < ch.want {
		return
	}
	ch.busy = false
	ob.emit(ch, ch.start, t, ch.firstSeq, seq, ch.frames, ch.buf, ch.notes)
}

// flow applies flow control sent on fc's channel to the transfer it
// answers: the learned peer, the id pair of normal fixed addressing, or
// the one transfer waiting for flow control.
func (ob *Observer) flow(fc *channel, t time.Time, f Frame) {
	to := ob.flowTarget(fc)
	if to == nil {
		ob.c.UnmatchedFC++
		return
	}
	to.last = t
	switch f.Status {
	case FlowContinue:
		to.awaitFC, to.sawFC, to.inBlock = false, true, 0
		to.blockSize, to.stMin = f.BlockSize, time.Duration(STminMicros(f.STmin))*time.Microsecond
	case FlowWait:
		to.notes.Waits++
	case FlowOverflow:
		ob.end(to, ReasonOverflow, t, 0, 0)
	}
}

func (ob *Observer) flowTarget(fc *channel) *channel {
	if p := fc.peer; p != nil {
		if p.busy {
			return p
		}
		return nil
	}
	if fc.Addressing == AddrNormalFixed {
		id := fc.ID&^0xFFFF | uint32(fc.Source)<<8 | uint32(fc.Target)
		if p := ob.chans[keyOf(id, 0)]; p != nil && p.busy {
			link(fc, p)
			return p
		}
		return nil
	}
	// The waiting transfer that started last; one that has its grant
	// already is not waiting for this frame unless its block ran out.
	var best *channel
	for _, c := range ob.order {
		if c != fc && c.busy && c.awaitFC && c.Addressing == fc.Addressing && (best == nil || c.start.After(best.start)) {
			best = c
		}
	}
	if best != nil {
		link(fc, best)
	}
	return best
}

// link records that a and b are the two ends of one conversation.
func link(a, b *channel) { a.peer, b.peer = b, a }

// lookup finds c's state: the key carries N_TA only under extended
// addressing (Target is the id's PS byte under normal fixed addressing).
func (ob *Observer) lookup(c Channel) *channel {
	var ta uint8
	if c.Addressing == AddrExtended {
		ta = c.Target
	}
	return ob.chans[keyOf(c.ID, ta)]
}

// Peer returns the learned other end of ch's channel, if any.
func (ob *Observer) Peer(c Channel) (Channel, bool) {
	ch := ob.lookup(c)
	if ch == nil || ch.peer == nil {
		return Channel{}, false
	}
	return ch.peer.Channel, true
}

// LinkChannels records that a and b answer each other (a UDS response
// paired with its request), so later flow control finds its transfer.
func (ob *Observer) LinkChannels(a, b Channel) {
	ca, cb := ob.lookup(a), ob.lookup(b)
	if ca != nil && cb != nil && !a.Functional && !b.Functional {
		link(ca, cb)
	}
}

func (ob *Observer) supersede(ch *channel, t time.Time) {
	if ch.busy {
		ob.end(ch, ReasonSuperseded, t, 0, 0)
	}
}

func (ob *Observer) emit(ch *channel, start, end time.Time, first, last uint64, frames int, data []byte, n Notes) {
	ob.c.PDUs++
	ob.c.Notes.BeforeFlowControl += n.BeforeFlowControl
	ob.c.Notes.BlockExceeded += n.BlockExceeded
	ob.c.Notes.STmin += n.STmin
	ob.c.Notes.Waits += n.Waits
	if ob.OnPDU == nil {
		return
	}
	ob.pdu = PDU{Channel: ch.Channel, Start: start, End: end, FirstSeq: first, LastSeq: last, Frames: frames, Data: data, Notes: n}
	ob.OnPDU(&ob.pdu)
}

func (ob *Observer) end(ch *channel, r Reason, t time.Time, want, got int) {
	ch.busy = false
	ob.c.Incomplete[r]++
	if ob.OnIncomplete != nil {
		ob.OnIncomplete(Incomplete{Channel: ch.Channel, Reason: r, Start: ch.start, End: t, FirstSeq: ch.firstSeq,
			Frames: ch.frames, Announced: ch.want, Received: len(ch.buf), Expected: want, Got: got})
	}
}

// sweep ends transfers whose timeout has passed at bus time now.
func (ob *Observer) sweep(now time.Time) {
	if now.Sub(ob.lastSweep) < sweepEvery && !now.Before(ob.lastSweep) {
		return
	}
	ob.lastSweep = now
	for _, ch := range ob.order {
		if !ch.busy {
			continue
		}
		limit, r := TimeoutNCr+observerGrace, ReasonCFTimeout
		if ch.awaitFC {
			limit, r = TimeoutNBs+observerGrace, ReasonFCTimeout
		}
		if now.Sub(ch.last) > limit {
			ob.end(ch, r, ch.last.Add(limit), 0, 0)
		}
	}
}

// Flush ends every open transfer as ReasonOpenAtEnd at t: the window or
// the capture ended inside it.
func (ob *Observer) Flush(t time.Time) {
	ob.sweep(t)
	for _, ch := range ob.order {
		if ch.busy {
			ob.end(ch, ReasonOpenAtEnd, t, 0, 0)
		}
	}
}
