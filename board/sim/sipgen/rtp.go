package sipgen

import (
	"encoding/binary"
	"math/rand/v2"
	"time"
)

const (
	ptPCMU       = 0    // RFC 3551 static payload type
	ptEvent      = 101  // dynamic type for telephone-event, as most phones pick
	clockRate    = 8000 // Hz, PCMU and telephone-event
	ptime        = 20 * time.Millisecond
	samples      = clockRate * int(ptime/time.Millisecond) / 1000 // per packet: 160
	rtpHeaderLen = 12
	rtpVersion   = 2 << 6
	rtpMarker    = 1 << 7

	// maxJitter bounds the send-time jitter added to each RTP packet, so
	// analysers see a non-zero RFC 3550 jitter.
	maxJitter = 2 * time.Millisecond

	eventEnd    = 1 << 7 // RFC 4733 E bit
	eventVolume = 10     // -10 dBm0, typical
	eventLen    = 4      // RFC 4733 payload: event, E/R/volume, duration
	// endCopies is how often the final packet of an event is sent
	// (RFC 4733 §2.5.1.4 says three times).
	endCopies = 3
)

// dtmfEvent is one key press carried as RFC 4733 packets from frame on.
type dtmfEvent struct {
	frame  int  // index of the first 20 ms frame of the event
	digit  byte // RFC 4733 event code 0-15
	frames int  // length of the tone in 20 ms frames
}

// packets is how many RTP packets (and frame slots) the event takes.
func (e dtmfEvent) packets() int { return e.frames - 1 + endCopies }

// rtpStream sends one direction of a call's media: one packet per 20 ms
// frame, PCMU or, while a key is pressed, telephone-event.
type rtpStream struct {
	src, dst endpoint
	ssrc     uint32
	seq0     uint16
	ts0      uint32
	start    time.Duration // nominal time of frame 0
	end      time.Duration // no packet at or after end
	tone     []byte        // one 20 ms PCMU frame, repeated
	dtmf     []dtmfEvent   // ascending, not overlapping
	jitter   *rand.Rand    // the stream's own, so merge order cannot shift draws
	n        int           // frames sent
	next     time.Duration // send time of frame n

	imp     Impairment // impair.go; zero means none
	impRand *rand.Rand
	sent    time.Duration // send time of the last packet
}

func newRTPStream(r *rand.Rand, src, dst endpoint, start, end time.Duration, tone []byte, dtmf []dtmfEvent) *rtpStream {
	s := &rtpStream{
		src: src, dst: dst,
		ssrc: r.Uint32(), seq0: uint16(r.Uint32()), ts0: r.Uint32(),
		start: start, end: end, tone: tone, dtmf: dtmf,
		jitter: rand.New(rand.NewPCG(r.Uint64(), r.Uint64())),
	}
	s.next = s.sendTime()
	return s
}

func (s *rtpStream) sendTime() time.Duration {
	at := s.start + time.Duration(s.n)*ptime + time.Duration(s.jitter.Int64N(int64(maxJitter)))
	if s.impRand != nil {
		at = s.extraDelay(at)
	}
	return at
}

func (s *rtpStream) peek() (time.Duration, bool) { return s.next, s.next < s.end }

func (s *rtpStream) pop() datagram {
	p := s.packet()
	s.sent = s.next
	s.n++
	if s.impRand != nil {
		s.skipDropped()
	}
	s.next = s.sendTime()
	return datagram{src: s.src, dst: s.dst, payload: p}
}

// packet builds frame n: audio, or a DTMF packet when an event covers it.
func (s *rtpStream) packet() []byte {
	for _, e := range s.dtmf {
		if j := s.n - e.frame; j >= 0 && j < e.packets() {
			dur := min(j+1, e.frames) * samples
			flags := byte(eventVolume)
			if j >= e.frames-1 {
				flags |= eventEnd
			}
			h := s.header(ptEvent, j == 0, s.ts0+uint32(e.frame*samples))
			return append(h, e.digit, flags, byte(dur>>8), byte(dur))
		}
	}
	h := s.header(ptPCMU, s.n == 0, s.ts0+uint32(s.n*samples))
	return append(h, s.tone...)
}

func (s *rtpStream) header(pt byte, marker bool, ts uint32) []byte {
	h := make([]byte, rtpHeaderLen, rtpHeaderLen+samples)
	h[0] = rtpVersion
	h[1] = pt
	if marker {
		h[1] |= rtpMarker
	}
	binary.BigEndian.PutUint16(h[2:], s.seq0+uint16(s.n))
	binary.BigEndian.PutUint32(h[4:], ts)
	binary.BigEndian.PutUint32(h[8:], s.ssrc)
	return h
}
