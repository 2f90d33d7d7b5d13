package sipgen

import (
	"math/rand/v2"
	"time"
)

// impairStream is the PCG stream constant of impairment draws; apart from
// the plan's so an impaired run lays out the same calls as a clean one.
const impairStream = 0x696d_7061_6972 // "impair"

// impair makes s drop and delay packets as imp says, drawing from its own
// generator (seed, stream index), never from the plan's.
func (s *rtpStream) impair(imp Impairment, seed int64, index uint64) {
	s.imp = imp
	s.impRand = rand.New(rand.NewPCG(uint64(seed)^index*0x9E37_79B9_7F4A_7C15, impairStream))
	s.skipDropped()
	s.next = s.sendTime()
}

// skipDropped advances past frames the impairment drops.
func (s *rtpStream) skipDropped() {
	for s.imp.LossPct > 0 && s.impRand.Float64()*100 < s.imp.LossPct {
		s.n++
	}
}

// extraDelay is the impairment's added delay for the next packet, kept
// no earlier than the previous send so packets never reorder in time.
func (s *rtpStream) extraDelay(at time.Duration) time.Duration {
	if s.imp.JitterMs > 0 {
		at += time.Duration(s.impRand.Float64() * s.imp.JitterMs * float64(time.Millisecond))
	}
	return max(at, s.sent)
}
