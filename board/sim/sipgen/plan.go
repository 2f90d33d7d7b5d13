package sipgen

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// outcome is how a call ends.
type outcome uint8

const (
	answered outcome = iota
	answeredDTMF
	busy
	notFound
	cancelled
)

// mix is one block of outcomes: half the calls answered, then one of each
// failure. Blocks are shuffled, so every len(mix) calls hold each outcome.
var mix = [...]outcome{answered, answered, answeredDTMF, busy, notFound, cancelled}

// span is a range of durations, drawn uniformly.
type span struct{ lo, hi time.Duration }

func (s span) draw(r *rand.Rand) time.Duration {
	return s.lo + time.Duration(r.Int64N(int64(s.hi-s.lo)+1))
}

// Delays between the messages of a call (processing plus network) and the
// human parts. The machine delays of a whole ladder stay under half of
// MinCallSlot, which is what lets ring and talk be shortened to fit.
var (
	tryingDelay  = span{2 * time.Millisecond, 20 * time.Millisecond}
	ringingDelay = span{30 * time.Millisecond, 250 * time.Millisecond}
	rejectDelay  = span{20 * time.Millisecond, 150 * time.Millisecond}
	ackDelay     = span{1 * time.Millisecond, 10 * time.Millisecond}
	replyDelay   = span{2 * time.Millisecond, 30 * time.Millisecond}
	mediaDelay   = span{5 * time.Millisecond, 40 * time.Millisecond}
	ringTime     = span{1 * time.Second, 8 * time.Second}
	talkTime     = span{5 * time.Second, 40 * time.Second}
)

const (
	slotJitter  = 2                // a call starts within the first 1/slotJitter of its slot
	endMargin   = time.Millisecond // the last message of a call leaves this before the end
	cseqMax     = 1000             // initial CSeq values are drawn from [1, cseqMax]
	unknownExt  = 9000             // extensions from here on do not exist: 404
	unknownExts = 1000             // how many of them

	dtmfDigits    = 4   // a DTMF call sends this many key presses
	dtmfLead      = 100 // frames of talk before the first key (2 s)
	dtmfGap       = 5   // frames of audio between keys (100 ms)
	dtmfFramesMin = 5   // a key is held 100 to 200 ms
	dtmfFramesMax = 10
	dtmfCodes     = 12 // events 0-9, * (10) and # (11)
)

// delays are one call's drawn durations.
type delays struct {
	trying, ringing, reject, ack, reply, reply2 time.Duration
	calleeMedia, callerMedia                    time.Duration
	ring, talk                                  time.Duration
}

func drawDelays(r *rand.Rand) delays {
	return delays{
		trying: tryingDelay.draw(r), ringing: ringingDelay.draw(r), reject: rejectDelay.draw(r),
		ack: ackDelay.draw(r), reply: replyDelay.draw(r), reply2: replyDelay.draw(r),
		calleeMedia: mediaDelay.draw(r), callerMedia: mediaDelay.draw(r),
		ring: ringTime.draw(r), talk: talkTime.draw(r),
	}
}

// ladder is a call's timeline as it is laid out.
type ladder struct {
	t     time.Duration
	steps []step
	flex  time.Duration // ring and talk time included in t
}

func (l *ladder) add(d time.Duration, m msgKind) {
	l.t += d
	l.steps = append(l.steps, step{l.t, m})
}

// media is when each side sends RTP, as offsets from the call's start.
type media struct{ calleeFrom, callerFrom, until time.Duration }

// layout places the messages of an o call with delays d.
func layout(o outcome, d delays) (ladder, media) {
	var l ladder
	var m media
	l.add(0, msgInvite)
	l.add(d.trying, msgTrying)
	switch o {
	case busy, notFound:
		k := msgBusy
		if o == notFound {
			k = msgNotFound
		}
		l.add(d.reject, k)
		l.add(d.ack, msgFailureAck)
	case cancelled:
		l.add(d.ringing, msgRinging)
		l.flex += d.ring
		l.add(d.ring, msgCancel)
		l.add(d.reply, msgCancelOK)
		l.add(d.reply2, msgTerminated)
		l.add(d.ack, msgFailureAck)
	default: // answered, answeredDTMF
		l.add(d.ringing, msgRinging)
		l.flex += d.ring
		l.add(d.ring, msgAnswer)
		m.calleeFrom = l.t + d.calleeMedia
		l.add(d.ack, msgAck)
		m.callerFrom = l.t + d.callerMedia
		l.flex += d.talk
		l.add(d.talk, msgBye)
		m.until = l.t
		l.add(d.reply, msgByeOK)
	}
	return l, m
}

// fit shortens ring and talk in proportion so the ladder ends before avail.
func fit(o outcome, d delays, avail time.Duration) (ladder, media) {
	l, m := layout(o, d)
	if l.t < avail-endMargin {
		return l, m
	}
	// MinCallSlot keeps fixed < avail: machine delays never fill half a slot.
	fixed := l.t - l.flex
	budget := (avail - endMargin - fixed) / time.Microsecond
	flex := l.flex / time.Microsecond
	d.ring = (d.ring / time.Microsecond) * budget / flex * time.Microsecond
	d.talk = (d.talk / time.Microsecond) * budget / flex * time.Microsecond
	return layout(o, d)
}

// plan lays out every call of o on net.
func plan(o Options, r *rand.Rand, net *network) []*call {
	n := o.calls()
	outcomes := make([]outcome, 0, n+len(mix))
	for len(outcomes) < n {
		block := mix
		r.Shuffle(len(block), func(i, j int) { block[i], block[j] = block[j], block[i] })
		outcomes = append(outcomes, block[:]...)
	}
	slot := o.Duration / time.Duration(n)
	calls := make([]*call, n)
	for i := range calls {
		start := time.Duration(i) * slot
		if i > 0 {
			start += time.Duration(r.Int64N(int64(slot / time.Duration(slotJitter))))
		}
		calls[i] = newCall(r, net, outcomes[i], start, o.Duration-start)
	}
	return calls
}

func newCall(r *rand.Rand, net *network, o outcome, start, avail time.Duration) *call {
	local := net.local[r.IntN(len(net.local))]
	remote := net.remote[r.IntN(len(net.remote))]
	caller, callee := local, remote
	if r.IntN(2) == 0 {
		caller, callee = remote, local
	}
	c := &call{
		start:         start,
		caller:        &party{h: caller, user: caller.user, tag: hex32(r), sess: r.Uint32()},
		callee:        &party{h: callee, user: callee.user, tag: hex32(r), sess: r.Uint32()},
		callID:        fmt.Sprintf("%016x%016x@%s", r.Uint64(), r.Uint64(), caller.ip),
		inviteBranch:  branch(r),
		ackBranch:     branch(r),
		byeBranch:     branch(r),
		cseq:          uint32(1 + r.IntN(cseqMax)),
		calleeCSeq:    uint32(1 + r.IntN(cseqMax)),
		calleeHangsUp: r.IntN(2) == 0,
	}
	if o == notFound {
		c.callee.user = fmt.Sprint(unknownExt + r.IntN(unknownExts))
	}
	l, m := fit(o, drawDelays(r), avail)
	c.steps = l.steps
	c.caller.media = caller.rtpPort() // every INVITE offers media
	if o == answered || o == answeredDTMF {
		c.callee.media = callee.rtpPort()
		c.media = mediaStreams(r, c, o == answeredDTMF, m)
	}
	return c
}

// mediaStreams builds both RTP directions of an answered call; the caller
// presses keys if dtmf is set and the talk is long enough.
func mediaStreams(r *rand.Rand, c *call, dtmf bool, m media) []*rtpStream {
	var keys []dtmfEvent
	if dtmf {
		frames := int((m.until - m.callerFrom) / ptime)
		at := dtmfLead
		for range dtmfDigits {
			e := dtmfEvent{frame: at, digit: byte(r.IntN(dtmfCodes)), frames: dtmfFramesMin + r.IntN(dtmfFramesMax-dtmfFramesMin+1)}
			if e.frame+e.packets() >= frames {
				break
			}
			keys = append(keys, e)
			at += e.packets() + dtmfGap
		}
	}
	caller := endpoint{c.caller.h, c.caller.media}
	callee := endpoint{c.callee.h, c.callee.media}
	return []*rtpStream{
		newRTPStream(r, caller, callee, c.start+m.callerFrom, c.start+m.until, randomTone(r), keys),
		newRTPStream(r, callee, caller, c.start+m.calleeFrom, c.start+m.until, randomTone(r), nil),
	}
}

func randomTone(r *rand.Rand) []byte {
	return toneFrame(1+r.IntN(toneStepMax), toneAmpMin+r.Int32N(toneAmpMax-toneAmpMin+1))
}

func hex32(r *rand.Rand) string  { return fmt.Sprintf("%08x", r.Uint32()) }
func branch(r *rand.Rand) string { return fmt.Sprintf("%s%016x", branchCookie, r.Uint64()) }
