package audio

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"fieldtap/services/audio/g711"
	"fieldtap/services/audio/g722"
	"fieldtap/services/rtp"
)

// Kinds of payload a stream carries, as rendering treats them.
const (
	kindUnsupported = iota
	kindPCMU
	kindPCMA
	kindG722
	kindCN    // RFC 3389 comfort noise: rendered as silence
	kindEvent // RFC 4733 telephone-event: not audio
)

// clockRate is the RTP clock of every codec rendered here (RFC 3551
// §4.5: 8000 Hz for PCMU, PCMA, CN, and for G.722 too, although it
// samples at 16 kHz).
const clockRate = 8000

// Gap causes.
const (
	CauseLoss         = "loss"          // packets missing by sequence number
	CauseNoPackets    = "no_packets"    // the timestamps skip with no sequence gap: the sender paused (silence suppression, hold)
	CauseComfortNoise = "comfort_noise" // the sender sent comfort noise (PT 13) for the span
)

// MaxGaps bounds the gaps one track lists; past it they are counted.
const MaxGaps = 1000

// maxJump is how far the RTP timestamps may run away from the capture
// clock between two packets before the timestamps are taken to have
// restarted, and the capture time places the packet instead: a sender
// that restarts its clock would otherwise make hours of silence.
const maxJump = 2 * time.Second

// Packet is one RTP datagram as captured.
type Packet struct {
	Time time.Time
	Data []byte // the UDP payload: RTP header and payload
}

// Options say how to read a stream's payload types and how much to
// render.
type Options struct {
	// Codecs names payload types as the call's SDP did (encoding names
	// as rtp.PTView gives them); the static types 0, 8, 9 and 13 need
	// no entry.
	Codecs map[uint8]string
	// MaxDuration bounds the track; past it rendering stops and
	// Track.Cut says where.
	MaxDuration time.Duration
}

// Gap is one stretch of silence the track holds in place of audio.
type Gap struct {
	At       time.Time     // capture time where it starts, on the track's timeline
	Offset   time.Duration // from the track's first sample
	Duration time.Duration
	Lost     int // packets missing by sequence number within it
	Cause    string
}

// Track is one stream rendered.
type Track struct {
	Rate    int    // samples per second: 8000, or 16000 for G.722
	Codec   string // the codec decoded
	Start   time.Time
	Samples []int16

	Packets      int // audio and comfort-noise packets placed
	Events       int // telephone-event packets (not audio)
	Duplicates   int // same sequence number again
	Lost         int // by sequence number, over the whole stream
	Overlapped   int // packets whose timestamps overlapped audio already placed: the overlap was dropped
	Jumps        int // timestamp restarts placed by capture time instead
	Malformed    int // not RTP, or a header that claims more than the datagram has
	OtherRate    int // packets of a codec at another sample rate than the track's
	Unsupported  map[string]int
	Gaps         []Gap
	GapsDropped  int
	Cut          bool // MaxSamples reached
	CutAt        time.Duration
	SilenceTotal time.Duration
}

// Duration is the track's length.
func (t *Track) Duration() time.Duration { return samplesDur(len(t.Samples), t.Rate) }

func samplesDur(n, rate int) time.Duration {
	if rate == 0 {
		return 0
	}
	return time.Duration(int64(n) * int64(time.Second) / int64(rate))
}

// kindOf names how pt is rendered.
func kindOf(pt uint8, codecs map[uint8]string) (int, string) {
	name, ok := codecs[pt]
	if !ok || strings.HasPrefix(name, "PT") {
		switch pt {
		case 0:
			name = "PCMU"
		case 8:
			name = "PCMA"
		case 9:
			name = "G722"
		case 13:
			name = "CN"
		}
	}
	switch strings.ToUpper(name) {
	case "PCMU":
		return kindPCMU, "PCMU"
	case "PCMA":
		return kindPCMA, "PCMA"
	case "G722":
		return kindG722, "G722"
	case "CN":
		return kindCN, "CN"
	case "TELEPHONE-EVENT":
		return kindEvent, "telephone-event"
	}
	if name == "" {
		name = fmt.Sprintf("PT%d", pt)
	}
	return kindUnsupported, name
}

func rateOf(kind int) int {
	if kind == kindG722 {
		return 2 * clockRate
	}
	return clockRate
}

// ordered is a decoded packet with its extended sequence number.
type ordered struct {
	Packet
	h   rtp.Header
	ext int64
}

// Unsupported is returned when a stream holds audio of no codec this
// package decodes; it names them.
type Unsupported struct{ Codecs []string }

func (e *Unsupported) Error() string {
	return "no decodable audio: the stream's codec is " + strings.Join(e.Codecs, ", ") + " (decoded: PCMU, PCMA, G722)"
}

// Render decodes one stream's packets (any order, as captured) into a
// track. It returns *Unsupported when no packet is of a codec it decodes
// but some carry audio it cannot.
func Render(pkts []Packet, o Options) (Track, error) {
	t := Track{Unsupported: map[string]int{}, Gaps: []Gap{}}
	seq := order(pkts, &t)
	// The first audio packet fixes the codec and the rate.
	first := slices.IndexFunc(seq, func(p ordered) bool {
		k, _ := kindOf(p.h.PT, o.Codecs)
		return k == kindPCMU || k == kindPCMA || k == kindG722
	})
	if first < 0 {
		for _, p := range seq {
			if k, name := kindOf(p.h.PT, o.Codecs); k == kindUnsupported {
				t.Unsupported[name]++
			}
		}
		if len(t.Unsupported) > 0 {
			return t, &Unsupported{Codecs: slices.Sorted(maps.Keys(t.Unsupported))}
		}
		return t, nil // nothing but events, comfort noise or malformed packets
	}
	kind, name := kindOf(seq[first].h.PT, o.Codecs)
	t.Rate, t.Codec = rateOf(kind), name
	r := renderer{t: &t, max: int(o.MaxDuration * time.Duration(t.Rate) / time.Second), g722: g722.NewDecoder()}
	var prev *ordered // the previous packet of any kind, for loss
	for i := range seq {
		p := &seq[i]
		if prev != nil {
			missing := int(p.ext - prev.ext - 1)
			r.lost += missing
			t.Lost += missing
		}
		prev = p
		if i < first {
			continue // events or comfort noise before any audio: nothing to place them after
		}
		k, name := kindOf(p.h.PT, o.Codecs)
		switch {
		case k == kindEvent:
			t.Events++
			continue
		case k == kindUnsupported:
			t.Unsupported[name]++
			continue
		case k != kindCN && rateOf(k) != t.Rate:
			t.OtherRate++
			continue
		}
		if !r.place(p, k) {
			break
		}
	}
	return t, nil
}

// order decodes the headers, extends the sequence numbers in capture
// order and sorts by them, dropping duplicates.
func order(pkts []Packet, t *Track) []ordered {
	byTime := slices.Clone(pkts)
	slices.SortStableFunc(byTime, func(a, b Packet) int { return a.Time.Compare(b.Time) })
	out := make([]ordered, 0, len(pkts))
	for _, p := range byTime {
		var h rtp.Header
		if !rtp.LooksLikeRTP(p.Data) || h.Decode(p.Data) != nil || h.Truncated {
			t.Malformed++
			continue
		}
		ext := int64(h.Seq)
		if n := len(out); n > 0 {
			// The extension nearest the previous packet's (RFC 3550 A.1's
			// idea, both ways, so reordering near a wrap keeps its place).
			last := out[n-1].ext
			ext = last + int64(int16(h.Seq-uint16(last)))
		}
		out = append(out, ordered{Packet: p, h: h, ext: ext})
	}
	slices.SortStableFunc(out, func(a, b ordered) int { return cmp.Compare(a.ext, b.ext) })
	return slices.CompactFunc(out, func(a, b ordered) bool {
		if a.ext == b.ext {
			t.Duplicates++
			return true
		}
		return false
	})
}

// renderer places packets on the track.
type renderer struct {
	t      *Track
	max    int // samples: Options.MaxDuration at the track's rate
	g722   *g722.Decoder
	buf    []int16
	lost   int // lost by sequence since the last placed packet
	placed bool
	ts     int64 // extended timestamp of the last placed packet
	at     time.Time
	pos    int  // sample position of the last placed packet
	cn     bool // the last placed packet was comfort noise
}

// place puts one audio or comfort-noise packet on the track; false once
// the bound is reached.
func (r *renderer) place(p *ordered, kind int) bool {
	t := r.t
	pos := 0
	if r.placed {
		dts := int64(int32(p.h.TS - uint32(r.ts)))
		ts := r.ts + dts
		dcap := p.Time.Sub(r.at)
		dtsDur := time.Duration(dts) * time.Second / clockRate
		if dts < 0 || dtsDur-dcap > maxJump {
			// The timestamps restarted or leapt: place it by capture time.
			t.Jumps++
			pos = max(r.pos+int(dcap.Seconds()*float64(t.Rate)), len(t.Samples))
		} else {
			pos = r.pos + int(dts)*t.Rate/clockRate
		}
		r.ts = ts
	} else {
		r.ts = int64(p.h.TS)
		t.Start = p.Time
	}
	r.placed, r.at = true, p.Time
	end := len(t.Samples)
	if pos > end {
		if r.gap(end, pos-end); t.Cut {
			return false
		}
	}
	r.pos = pos
	r.cn = kind == kindCN
	t.Packets++
	if kind == kindCN {
		r.lost = 0
		return true
	}
	r.buf = r.buf[:0]
	switch kind {
	case kindPCMU:
		r.buf = g711.DecodeUlaw(r.buf, p.h.Payload)
	case kindPCMA:
		r.buf = g711.DecodeAlaw(r.buf, p.h.Payload)
	case kindG722:
		r.buf = r.g722.Decode(r.buf, p.h.Payload)
	}
	r.lost = 0
	s := r.buf
	if pos < len(t.Samples) {
		// Timestamps overlap what is placed: keep what came first.
		t.Overlapped++
		skip := min(len(t.Samples)-pos, len(s))
		s = s[skip:]
	}
	if room := r.max - len(t.Samples); len(s) > room {
		t.Samples = append(t.Samples, s[:max(room, 0)]...)
		t.Cut, t.CutAt = true, samplesDur(len(t.Samples), t.Rate)
		return false
	}
	t.Samples = append(t.Samples, s...)
	return true
}

// gap adds n samples of silence at sample position at, and lists it.
func (r *renderer) gap(at, n int) {
	t := r.t
	if room := r.max - len(t.Samples); n > room {
		n = max(room, 0)
		t.Cut, t.CutAt = true, samplesDur(at+n, t.Rate)
	}
	t.Samples = append(t.Samples, make([]int16, n)...)
	d := samplesDur(n, t.Rate)
	t.SilenceTotal += d
	cause := CauseNoPackets
	switch {
	case r.lost > 0:
		cause = CauseLoss
	case r.cn:
		cause = CauseComfortNoise
	}
	if len(t.Gaps) == MaxGaps {
		t.GapsDropped++
		return
	}
	off := samplesDur(at, t.Rate)
	t.Gaps = append(t.Gaps, Gap{At: t.Start.Add(off), Offset: off, Duration: d, Lost: r.lost, Cause: cause})
}
