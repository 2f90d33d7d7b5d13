package rtp

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// defaultPtimeMs is RFC 3551 §4.5's default packetisation for audio.
const defaultPtimeMs = 20

// PTView is one payload type seen on a stream. Codec is the encoding
// name an SDP body gave, else the static name or "PT<n>"; Codec.Own says
// whether it is the box's own name or only the sender's.
type PTView struct {
	PT      uint8
	Codec   Codec
	Packets uint64
}

// IntervalView is one interval with its own loss and MOS.
type IntervalView struct {
	Start   time.Time
	LostPct float64
	Interval
	MOS
}

// StreamView is one stream at one moment: plain values, safe to keep.
type StreamView struct {
	ID           string
	SSRC         string // 8 upper-case hex digits, as in the stream id
	Src          string
	Dst          string
	CallID       string
	Orphaned     bool
	Codec        Codec // the main payload type's: see PTView
	ClockRate    int
	PayloadTypes []PTView
	First        time.Time
	Last         time.Time
	Packets      uint64
	Expected     int64
	Lost         int64
	LostPct      float64
	Duplicates   uint64
	OutOfOrder   uint64
	SeqResets    uint64
	Markers      uint64
	MaxJitterMs  float64
	MeanJitterMs float64
	MaxDeltaMs   float64
	// TimingEpochs is 1 plus the sender's clock restarts: jitter starts
	// again at each, max delta goes on by arrival.
	TimingEpochs uint64
	MOS
	Intervals        []IntervalView // nil unless the snapshot copied them
	IntervalsDropped uint64         // oldest intervals overwritten at the per-stream bound
	PTOverflow       uint64         // packets of payload types past maxPTs
	// SRTP is nil for RTP (or a stream no SDP announced).
	SRTP *SRTPView

	Key Key
	Seq uint64 // creation order, never reused
}

// DialogView is what one Call-ID signalled about media.
type DialogView struct {
	CallID     string
	SDP        []SDPEvent
	SDPDropped int
	Endpoints  []string
	// EndpointsDropped counts announced addresses past
	// maxEndpointsPerDialog, not in Endpoints.
	EndpointsDropped int
	FinalCode        int
	Ended            bool
	// RTCPFlowsDropped counts RTCP address pairs past
	// maxRTCPFlowsPerDialog, whose datagrams export_capture leaves out.
	RTCPFlowsDropped int

	rtcp []flowSpan // for Flows
}

// Snapshot is a consistent copy of the analyser's tables.
type Snapshot struct {
	Streams []StreamView // confirmed streams, creation order
	Dialogs map[string]*DialogView
	Events  []Event // time order
	Reports []Report
	Stats   Stats
}

// Stream returns the stream with id (StreamID's form; the SSRC's hex
// digits in either case, padded or not).
func (sn *Snapshot) Stream(id string) (StreamView, bool) {
	k, ok := ParseStreamID(id)
	if !ok {
		return StreamView{}, false
	}
	for _, s := range sn.Streams {
		if s.Key == k {
			return s, true
		}
	}
	return StreamView{}, false
}

// ForCall returns the streams of callID.
func (sn *Snapshot) ForCall(callID string) []StreamView {
	var out []StreamView
	for _, s := range sn.Streams {
		if s.CallID == callID {
			out = append(out, s)
		}
	}
	return out
}

// StreamFilter selects streams; a zero field selects every stream.
type StreamFilter struct {
	CallID   string
	Orphaned *bool  // true: only unsignalled (heuristic) streams; false: only signalled
	Codec    string // the main codec's name, compared without case
	// MinLossPct keeps streams that lost at least this %; MaxMOS those
	// scored at most this, so an ungrounded stream (no MOS) never matches.
	MinLossPct *float64
	MaxMOS     *float64
}

// Match reports whether f selects s.
func (f StreamFilter) Match(s StreamView) bool {
	switch {
	case f.CallID != "" && s.CallID != f.CallID,
		f.Orphaned != nil && s.Orphaned != *f.Orphaned,
		f.Codec != "" && !strings.EqualFold(f.Codec, string(s.Codec)),
		f.MinLossPct != nil && s.LostPct < *f.MinLossPct,
		f.MaxMOS != nil && (s.Value == nil || *s.Value > *f.MaxMOS):
		return false
	}
	return true
}

// ReportsAbout returns the RTCP reports about ss, in the order kept: the
// SRs their senders sent and those whose report blocks name their SSRCs.
func (sn *Snapshot) ReportsAbout(ss []StreamView) []Report {
	ssrcs := map[uint32]bool{}
	for _, s := range ss {
		ssrcs[s.Key.SSRC] = true
	}
	var out []Report
	for _, r := range sn.Reports {
		hit := ssrcs[r.SenderSSRC]
		for _, b := range r.Blocks {
			hit = hit || ssrcs[b.SSRC]
		}
		if hit {
			out = append(out, r)
		}
	}
	return out
}

// Snapshot copies the analyser's state; intervals are copied only when
// asked, since they are most of a stream's memory.
func (a *Analyser) Snapshot(intervals bool) *Snapshot {
	a.mu.Lock()
	defer a.mu.Unlock()
	sn := &Snapshot{Dialogs: map[string]*DialogView{}, Stats: a.st, Streams: a.streamViews(intervals)}
	a.dialogs.each(func(d *dialogMedia) {
		id := d.callID
		v := &DialogView{CallID: id, SDP: slices.Clone(d.sdp), SDPDropped: d.sdpDropped, EndpointsDropped: d.epDropped, FinalCode: d.final, Ended: d.ended, Endpoints: []string{},
			RTCPFlowsDropped: d.rtcpDropped, rtcp: slices.Clone(d.rtcp)}
		for _, e := range d.endpoints {
			v.Endpoints = append(v.Endpoints, e.String())
		}
		sn.Dialogs[id] = v
	})
	seq := a.st.EventsOverwrote // every overwrite pushed one older event out
	a.events.each(func(e *Event) {
		ev := *e
		ev.Seq = seq
		seq++
		sn.Events = append(sn.Events, ev)
	})
	slices.SortStableFunc(sn.Events, func(x, y Event) int { return x.Time.Compare(y.Time) })
	a.reports.each(func(r Report) { sn.Reports = append(sn.Reports, r) })
	return sn
}

// Streams is Snapshot(intervals).Streams alone: an answer that reads
// only the streams (what_happened's media bursts, a comparison's sides)
// does not make a view of every dialog's media, which at 100,000 calls
// with SDP was most of its time.
func (a *Analyser) Streams(intervals bool) []StreamView {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.streamViews(intervals)
}

// streamViews are the confirmed streams in the order they began; the
// caller holds mu.
func (a *Analyser) streamViews(intervals bool) []StreamView {
	var out []StreamView
	a.streams.each(func(_ Key, s *stream) {
		if s.confirmed {
			out = append(out, s.view(intervals))
		}
	})
	slices.SortFunc(out, func(x, y StreamView) int { return int(x.Seq) - int(y.Seq) })
	return out
}

func (s *stream) view(withIntervals bool) StreamView {
	v := StreamView{
		ID: StreamID(s.key), SSRC: fmt.Sprintf("%08X", s.key.SSRC), Src: s.key.Src.String(), Dst: s.key.Dst.String(),
		CallID: s.callID, Orphaned: s.callID == "", First: s.first.UTC(), Last: s.last.UTC(),
		Packets: s.packets, Expected: s.seq.expected(), Lost: s.seq.lost(), Duplicates: s.seq.duplicates,
		OutOfOrder: s.seq.outOfOrder, SeqResets: s.seq.resets, Markers: s.markers,
		MaxJitterMs: s.maxJitter, MeanJitterMs: s.meanJitter, MaxDeltaMs: s.maxDelta, TimingEpochs: s.epochs,
		IntervalsDropped: s.iv.dropped, PTOverflow: s.ptOverflow, Key: s.key, Seq: s.id,
		PayloadTypes: []PTView{}, SRTP: s.srtpView(),
	}
	var main PTView
	for _, p := range s.pts {
		if p.packets == 0 {
			break
		}
		pv := PTView{PT: p.pt, Codec: codecName(s.ep, p.pt), Packets: p.packets}
		v.PayloadTypes = append(v.PayloadTypes, pv)
		if p.pt != ptCN && p.pt != ptCNOld && pv.Packets > main.Packets {
			main = pv
		}
	}
	if main.Packets == 0 && len(v.PayloadTypes) > 0 {
		main = v.PayloadTypes[0]
	}
	v.Codec = main.Codec
	v.ClockRate, _ = resolveClock(s.ep, main.PT)
	if v.Expected > 0 {
		v.LostPct = 100 * float64(v.Lost) / float64(v.Expected)
	}
	ptime := float64(defaultPtimeMs)
	if s.ep != nil && s.ep.media.Ptime > 0 {
		ptime = float64(s.ep.media.Ptime)
	}
	v.MOS = EstimateMOS(string(v.Codec), v.LostPct, v.MeanJitterMs, ptime)
	if withIntervals {
		for _, iv := range s.iv.list(&s.seq) {
			w := IntervalView{Start: time.Unix(0, iv.Start).UTC(), Interval: iv}
			if iv.Expected > 0 {
				w.LostPct = 100 * float64(iv.Lost) / float64(iv.Expected)
			}
			w.MOS = EstimateMOS(string(v.Codec), w.LostPct, iv.MeanJitter, ptime)
			v.Intervals = append(v.Intervals, w)
		}
	}
	return v
}
