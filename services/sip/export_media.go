package sip

import (
	"maps"
	"net/netip"
	"slices"
	"sort"
	"time"

	"fieldtap/services/framestore"
	"fieldtap/services/netdecode"
	"fieldtap/services/ring"
)

// MaxMediaScanFrames bounds the frames one export decodes while looking
// for media, over all ports. A frame costs a few hundred nanoseconds, so
// the bound keeps an export under a second or so; a ten-minute two-way
// G.711 call is 60 000 frames, so it binds only for filter exports whose
// calls span a busy port's whole ring. Frames past it are counted in
// ExportResult.MediaFramesUnscanned.
const MaxMediaScanFrames = 1_000_000

// RFC 5761 §4: with RTP and RTCP on one address pair, a second byte of
// 192..223 is RTCP. Used only to tell the two apart on a muxed pair.
const (
	rtcpMuxTypeMin = 192
	rtcpMuxTypeMax = 223
)

// MediaFlow is one direction of a call's media as the media analyser saw
// it (rtp.Snapshot.Flows). The exporter finds its frames by address pair
// within [First, Last], both the capture times of real packets.
type MediaFlow struct {
	Src, Dst    netip.AddrPort
	RTCP        bool
	First, Last time.Time
	Packets     uint64 // datagrams the media analyser counted on it
}

type addrPair struct{ src, dst netip.AddrPort }

// mediaScan matches decoded datagrams against the flows; it is the
// netdecode.Handler of one port's scan.
type mediaScan struct {
	flows  []MediaFlow
	byPair map[addrPair][]int // indices into flows
	found  []uint64           // frames matched per flow
	refs   map[FrameRef]bool
	port   string
	seq    uint64 // the frame being decoded
	res    *ExportResult
}

func newMediaScan(flows []MediaFlow, refs map[FrameRef]bool, res *ExportResult) *mediaScan {
	m := &mediaScan{flows: flows, byPair: map[addrPair][]int{}, found: make([]uint64, len(flows)), refs: refs, res: res}
	for i, f := range flows {
		p := addrPair{f.Src, f.Dst}
		m.byPair[p] = append(m.byPair[p], i)
	}
	return m
}

// UDP implements netdecode.Handler: a datagram on a flow's pair within
// its window is that flow's frame.
func (m *mediaScan) UDP(d netdecode.Datagram) {
	best := -1
	for _, i := range m.byPair[addrPair{d.Src, d.Dst}] {
		f := m.flows[i]
		if d.Time.Before(f.First) || d.Time.After(f.Last) {
			continue
		}
		if best < 0 || f.RTCP == looksRTCP(d.Payload) {
			best = i
		}
	}
	if best < 0 {
		return
	}
	ref := FrameRef{Port: m.port, Seq: m.seq, Set: true}
	if m.refs[ref] {
		return // already in the file as a SIP frame
	}
	m.refs[ref] = true
	m.found[best]++
	if m.flows[best].RTCP {
		m.res.RTCPFrames++
	} else {
		m.res.RTPFrames++
	}
}

// TCP implements netdecode.Handler: media export is UDP only, so every
// byte is consumed and nothing is buffered.
func (m *mediaScan) TCP(_ *netdecode.Stream, _ time.Time, data []byte) int { return len(data) }

func looksRTCP(b []byte) bool {
	return len(b) >= 2 && b[1] >= rtcpMuxTypeMin && b[1] <= rtcpMuxTypeMax
}

// window is a span of capture time holding some flow's packets.
type window struct{ from, to time.Time }

// mergeWindows returns the flows' time spans sorted and merged.
func mergeWindows(flows []MediaFlow) []window {
	ws := make([]window, 0, len(flows))
	for _, f := range flows {
		ws = append(ws, window{f.First, f.Last})
	}
	slices.SortFunc(ws, func(a, b window) int { return a.from.Compare(b.from) })
	var out []window
	for _, w := range ws {
		if n := len(out); n > 0 && !w.from.After(out[n-1].to) {
			if w.to.After(out[n-1].to) {
				out[n-1].to = w.to
			}
			continue
		}
		out = append(out, w)
	}
	return out
}

// seqRange finds the frames of snap captured within w by binary search.
// It assumes a port's frames are in time order, as live capture delivers
// them; a file whose timestamps step backwards can hide a frame at a
// window's edge.
func seqRange(snap ring.Snapshot[framestore.Record], w window) (lo, hi uint64) {
	first, n := snap.FirstSeq(), snap.Len()
	at := func(i int) time.Time { r, _ := snap.Get(first + uint64(i)); return r.Time }
	lo = first + uint64(sort.Search(n, func(i int) bool { return !at(i).Before(w.from) }))
	hi = first + uint64(sort.Search(n, func(i int) bool { return at(i).After(w.to) }))
	return lo, max(lo, hi)
}

// scanMedia adds to refs the frames of every port that carry one of the
// flows, decoding at most MaxMediaScanFrames frames, and records in res
// what it found and what it could not.
func scanMedia(snaps map[string]ring.Snapshot[framestore.Record], flows []MediaFlow, refs map[FrameRef]bool, res *ExportResult) {
	res.MediaFlows = len(flows)
	if len(flows) == 0 {
		return
	}
	m := newMediaScan(flows, refs, res)
	ws := mergeWindows(flows)
	budget := MaxMediaScanFrames
	for _, port := range slices.Sorted(maps.Keys(snaps)) {
		snap := snaps[port]
		m.port = port
		dec := netdecode.New(netdecode.Options{}, m)
		for _, w := range ws {
			lo, hi := seqRange(snap, w)
			for seq := lo; seq < hi; seq++ {
				if budget == 0 {
					res.MediaScanCut = true
					res.MediaFramesUnscanned += int(hi - seq)
					break
				}
				budget--
				r, _ := snap.Get(seq)
				m.seq = seq
				dec.Decode(r.Time, r.Link, r.Data)
			}
		}
	}
	for i, f := range flows {
		if f.Packets > m.found[i] {
			res.MediaFramesMissing += int(f.Packets - m.found[i])
		}
	}
}

var _ netdecode.Handler = (*mediaScan)(nil)
