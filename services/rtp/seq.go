package rtp

// RFC 3550 Appendix A.1 bounds on sequence jumps.
const (
	maxDropout  = 3000 // forward jump still taken as loss
	maxMisorder = 100  // backward jump still taken as late
	// windowBits remembers which recent sequence numbers arrived, so a
	// duplicate is told from a late packet; it covers maxMisorder.
	windowBits  = 256
	windowWords = windowBits / 64
	seqMod      = 1 << 16
)

// seqState counts sequence numbers: extended highest, duplicates,
// out-of-order and resets (a jump past the bounds confirmed by the next
// packet, as RFC 3550 A.1 does for a restarted sender).
type seqState struct {
	started    bool
	base       int64 // extended seq of the segment's first packet
	max        int64 // extended highest seq of the segment
	badSeq     int64 // seq+1 of a jump awaiting confirmation, or -1
	priorExp   int64 // expected packets of segments before the last reset
	unique     uint64
	duplicates uint64
	outOfOrder uint64
	resets     uint64
	seen       [windowWords]uint64
}

func (s *seqState) bit(ext int64) (word int, mask uint64) {
	i := int(ext & (windowBits - 1))
	return i / 64, 1 << (i % 64)
}

func (s *seqState) mark(ext int64) bool {
	w, m := s.bit(ext)
	dup := s.seen[w]&m != 0
	s.seen[w] |= m
	return dup
}

func (s *seqState) restart(seq uint16) {
	s.base, s.max, s.badSeq = int64(seq), int64(seq), -1
	s.seen = [windowWords]uint64{}
	s.mark(s.max)
}

// add accounts one packet; it reports whether the packet was a duplicate,
// and whether it is the new highest of the sequence (in order after a
// gap or none, or confirming a restart) rather than late or a jump not
// yet confirmed.
func (s *seqState) add(seq uint16) (dup, ahead bool) {
	if !s.started {
		s.started = true
		s.restart(seq)
		s.unique++
		return false, true
	}
	udelta := uint16(seq - uint16(s.max))
	switch {
	case udelta == 0:
		s.duplicates++
		return true, false
	case udelta < maxDropout:
		next := s.max + int64(udelta)
		if udelta >= windowBits {
			s.seen = [windowWords]uint64{}
		} else {
			for e := s.max + 1; e < next; e++ {
				w, m := s.bit(e)
				s.seen[w] &^= m
			}
		}
		s.max = next
		s.mark(next)
		s.badSeq = -1
		s.unique++
		return false, true
	case udelta <= seqMod-maxMisorder:
		// A big jump: a restarted sender if the next packet follows it.
		if int64(seq) == s.badSeq {
			s.priorExp += s.max - s.base + 1
			s.resets++
			s.restart(seq - 1)
			s.max = int64(seq)
			s.mark(s.max)
			s.unique++
			return false, true
		}
		s.badSeq = int64(seq+1) & (seqMod - 1)
		s.unique++ // counted as received; expected catches up on a reset
		return false, false
	default:
		ext := s.max - int64(seqMod-int(udelta))
		if s.max-ext < windowBits && s.mark(ext) {
			s.duplicates++
			return true, false
		}
		s.outOfOrder++
		s.unique++
		if ext < s.base {
			s.base = ext
		}
		return false, false
	}
}

// expected is how many packets the sequence numbers span.
func (s *seqState) expected() int64 {
	if !s.started {
		return 0
	}
	return s.priorExp + s.max - s.base + 1
}

// lost is expected minus unique packets, never negative.
func (s *seqState) lost() int64 {
	return max(s.expected()-int64(s.unique), 0)
}
