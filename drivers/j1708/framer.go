package j1708

import (
	"fieldtap/drivers/wire"
	"time"
)

// Framing bounds.
const (
	// maxRun bounds the bytes buffered without an idle gap: eight longest
	// messages, about 175 ms of back-to-back traffic at 9600 baud. A run
	// that reaches it is framed at once and counted Overlong.
	maxRun = 8 * wire.MaxJ1708Message
	// maxNoise is the most stray bytes skipped between two messages of one
	// run. A longer stretch is a garbled message, not line noise, and
	// searching inside it for checksum-valid substrings would invent
	// messages; such a run keeps only a full cover with short gaps.
	maxNoise = 3
)

// Segmentation score weights, used only for a run that is not one valid
// message (a run that is one stays whole). Bytes covered by messages count
// most; then more messages, because a run that missed its gaps is made of
// whole messages and glued short ones (80C200BE80C200BE) also sum to zero
// together — the price is that a glued message with a zero-sum prefix
// (about L/256 for L bytes) is split; then fewer skipped stretches.
const (
	scoreByte    = 64
	scoreMessage = 1
	scoreSkip    = 2
	scoreNone    = -1 << 30
)

// FramerStats counts what the framer saw.
type FramerStats struct {
	Messages uint64 `json:"messages"`
	Runs     uint64 `json:"runs"` // byte runs delimited by idle gaps
	// Resyncs are runs that were not exactly one valid message but yielded
	// messages by checksum: glued messages split, noise bytes skipped.
	Resyncs uint64 `json:"resyncs"`
	// ChecksumFailures are runs of at least wire.MinJ1708Message bytes that yielded
	// no message: a garbled or collided message.
	ChecksumFailures uint64 `json:"checksum_failures"`
	// Noise counts stray stretches (at most maxNoise bytes) skipped between
	// messages, and lone bytes.
	Noise uint64 `json:"noise"`
	// Discarded counts every byte that ended in no message.
	Discarded uint64 `json:"discarded_bytes"`
	// Overlong counts runs framed because they reached maxRun bytes
	// without an idle gap.
	Overlong uint64 `json:"overlong"`
}

// Framer turns bytes with arrival times into J1708 messages. It frames on
// idle gaps and resynchronises on the checksum (all bytes of a message
// sum to 0 mod 256, wire.MinJ1708Message..MaxJ1708Message bytes). It does not allocate.
// The zero value is not usable; call NewFramer. Not safe for concurrent use.
type Framer struct {
	gap, byteTime time.Duration
	buf           [maxRun]byte
	n             int
	last          time.Time // arrival of the newest buffered byte

	take   [maxRun + 1]int32 // best score of a segmentation starting with a message at i
	best   [maxRun + 1]int32 // best score from i on
	choice [maxRun + 1]int8  // >0: message length at i; <0: bytes skipped at i
	Stats  FramerStats
}

// NewFramer returns a framer that ends a message after gap of idle line.
// byteTime is one character on the wire (10 bits at the baud rate), so a
// chunk of n bytes that arrives at t started arriving at t - n×byteTime.
func NewFramer(gap, byteTime time.Duration) *Framer {
	return &Framer{gap: gap, byteTime: byteTime}
}

// Emit receives one message and the arrival time of its last byte. msg is
// borrowed: it is valid only during the call.
type Emit func(msg []byte, at time.Time)

// Feed adds bytes that arrived (the last of them) at at, emitting every
// message an idle gap before them completes.
func (f *Framer) Feed(b []byte, at time.Time, emit Emit) {
	if len(b) == 0 {
		return
	}
	if f.n > 0 && at.Sub(f.last)-time.Duration(len(b))*f.byteTime >= f.gap {
		f.flush(emit)
	}
	fed := false
	for len(b) > 0 {
		if f.n == maxRun {
			f.Stats.Overlong++
			if fed {
				// The run ends inside this chunk: its last byte arrived a
				// byte time before each of the len(b) still to come.
				f.last = at.Add(-time.Duration(len(b)) * f.byteTime)
			}
			f.flush(emit)
		}
		c := copy(f.buf[f.n:], b)
		f.n += c
		b = b[c:]
		fed = true
	}
	f.last = at
}

// Idle tells the framer nothing arrived up to now: a buffered run older
// than the gap is complete.
func (f *Framer) Idle(now time.Time, emit Emit) {
	if f.n > 0 && now.Sub(f.last) >= f.gap {
		f.flush(emit)
	}
}

// Flush frames whatever is buffered, as at the end of a capture.
func (f *Framer) Flush(emit Emit) {
	if f.n > 0 {
		f.flush(emit)
	}
}

// Buffered reports how many bytes wait for a gap.
func (f *Framer) Buffered() int { return f.n }

func (f *Framer) flush(emit Emit) {
	run := f.buf[:f.n]
	end := f.last
	f.n = 0
	f.Stats.Runs++
	if len(run) >= wire.MinJ1708Message && len(run) <= wire.MaxJ1708Message && Checksum(run) {
		f.Stats.Messages++
		emit(run, end)
		return
	}
	if !f.segment(run) {
		if len(run) >= wire.MinJ1708Message {
			f.Stats.ChecksumFailures++
		} else {
			f.Stats.Noise++
		}
		f.Stats.Discarded += uint64(len(run))
		return
	}
	found := false
	for i := 0; i < len(run); {
		c := int(f.choice[i])
		if c < 0 {
			f.Stats.Noise++
			f.Stats.Discarded += uint64(-c)
			i -= c
			continue
		}
		found = true
		f.Stats.Messages++
		emit(run[i:i+c], end.Add(-time.Duration(len(run)-i-c)*f.byteTime))
		i += c
	}
	if found {
		f.Stats.Resyncs++
	}
}

// segment finds the best cover of run by valid messages separated by at
// most maxNoise stray bytes, filling choice. It reports false when no
// cover with at least one message exists.
func (f *Framer) segment(run []byte) bool {
	n := len(run)
	f.take[n], f.best[n] = scoreNone, 0
	for i := n - 1; i >= 0; i-- {
		// A message starting at i.
		take, tl := int32(scoreNone), 0
		var sum byte
		for l := 1; l <= wire.MaxJ1708Message && i+l <= n; l++ {
			sum += run[i+l-1]
			if l < wire.MinJ1708Message || sum != 0 || f.best[i+l] == scoreNone {
				continue
			}
			if s := int32(l*scoreByte+scoreMessage) + f.best[i+l]; s > take {
				take, tl = s, l
			}
		}
		f.take[i] = take
		best, choice := take, tl
		// Or a short stray stretch, then a message (or the end).
		for s := 1; s <= maxNoise && i+s <= n; s++ {
			next := int32(0)
			if i+s < n {
				next = f.take[i+s]
			}
			if next == scoreNone {
				continue
			}
			if v := next - scoreSkip; v > best {
				best, choice = v, -s
			}
		}
		f.best[i], f.choice[i] = best, int8(choice)
	}
	if f.best[0] == scoreNone {
		return false
	}
	for i := 0; i < n; {
		c := int(f.choice[i])
		if c > 0 {
			return true
		}
		i -= c
	}
	return false
}
