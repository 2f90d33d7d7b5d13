package sip

import (
	"context"
	"errors"
	"maps"
	"net/netip"
	"slices"
	"sort"
	"time"

	"fieldtap/drivers/wire"
	"fieldtap/services/framestore"
	"fieldtap/services/netdecode"
	"fieldtap/services/recorder"
	"fieldtap/services/ring"
	"fieldtap/services/tlsdecrypt"
)

// MaxExportScanFrames bounds the frames one export decodes, over all
// ports and windows. A frame costs a few hundred nanoseconds, so the
// bound keeps an export around a second; a ten-minute two-way G.711 call
// is 60 000 frames, so it binds only for filter exports whose calls span
// a busy port's whole recording. Past it ExportResult.ScanCut says where.
const MaxExportScanFrames = 1_000_000

// exportLead starts each dialog's window this long before its first
// message, so the decoder sees the fragments and the TCP segments that
// came before the frame completing it (a reassembly horizon of seconds
// in practice; Linux waits 30 s for fragments, nothing real does).
const exportLead = 2 * time.Second

// RFC 5761 §4: with RTP and RTCP on one address pair, a second byte of
// 192..223 is RTCP. Used only to tell the two apart on a muxed pair.
const (
	rtcpMuxTypeMin = 192
	rtcpMuxTypeMax = 223
)

// Frame tags: a ring frame is its sequence number; a recorded frame sets
// recordedTag, its segment (an index into exportScan.segments) and its
// block offset (segments are at most 1 GiB, well under 2^40).
const (
	recordedTag   = 1 << 63
	tagOffsetBits = 40
	tagOffsetMask = 1<<tagOffsetBits - 1
	maxTagSegment = 1<<(63-tagOffsetBits) - 1
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

type markKey struct {
	port string
	tag  uint64
}

// exportScan decodes the frames of the export's windows, port by port,
// and marks every frame that carried a message of the dialogs (all its
// fragments and segments) or a datagram of their media.
type exportScan struct {
	callIDs   map[string]int // kept messages per Call-ID
	found     map[string]int // messages found per Call-ID
	flows     []MediaFlow
	byPair    map[addrPair][]int
	flowFound []uint64
	marks     map[markKey]bool
	res       *ExportResult

	snaps    map[string]ring.Snapshot[framestore.Record]
	ringFrom map[string]time.Time // each ring's oldest frame: older ones come from the recorder
	rec      Recorded
	segments []string
	segIndex map[string]int
	budget   int
	ports    map[string]*portScan // the current window's decoders
	cutAt    time.Time
	// dec is Exporter.dec: the live decoder's VXLAN ports.
	dec netdecode.Options
	// media, when set, receives each flow datagram found (ReadMedia);
	// trimmed sees every frame scanned, to count those cut short.
	media   func(flow int, d *netdecode.Datagram)
	trimmed func(link wire.LinkType, data []byte, origLen int)
	tls     *tlsdecrypt.Keys // Exporter.tls
}

func newExportScan(kept map[string]int, flows []MediaFlow, snaps map[string]ring.Snapshot[framestore.Record], rec Recorded, res *ExportResult) *exportScan {
	sc := &exportScan{
		callIDs: kept, found: map[string]int{}, flows: flows, byPair: map[addrPair][]int{},
		flowFound: make([]uint64, len(flows)), marks: map[markKey]bool{}, res: res,
		snaps: snaps, ringFrom: map[string]time.Time{}, rec: rec, segIndex: map[string]int{}, budget: MaxExportScanFrames,
	}
	for i, f := range flows {
		p := addrPair{f.Src, f.Dst}
		sc.byPair[p] = append(sc.byPair[p], i)
	}
	for name, snap := range snaps {
		if r, ok := snap.Get(snap.FirstSeq()); ok {
			sc.ringFrom[name] = r.Time
		}
	}
	return sc
}

// portScan is one port's decoder in one window: a SIP analyser whose
// messages and media datagrams come back here.
type portScan struct {
	sc   *exportScan
	port string
	an   *Analyser
}

func (sc *exportScan) port(name string) *portScan {
	if p := sc.ports[name]; p != nil {
		return p
	}
	p := &portScan{sc: sc, port: name}
	o := sc.dec
	o.TrackFrames = true
	p.an = newAnalyser(p, o)
	p.an.SetMediaHook(p)
	if sc.tls != nil {
		p.an.SetTLSKeys(sc.tls, tlsdecrypt.Limits{})
	}
	sc.ports[name] = p
	return p
}

// Add implements sink: a message of one of the dialogs marks its frames.
func (p *portScan) Add(_ Meta, m *Parsed, _ []byte) {
	id := string(m.Get(HCallID))
	if _, ok := p.sc.callIDs[id]; !ok {
		return
	}
	p.sc.found[id]++
	for _, tag := range p.an.msgFrames {
		p.sc.marks[markKey{p.port, tag}] = true
	}
}

// Undecodable implements sink.
func (p *portScan) Undecodable(string) {}

// SIPMessage implements MediaHook: the export needs no SDP.
func (p *portScan) SIPMessage(Meta, *Parsed) {}

// Datagram implements MediaHook: a datagram on a flow's pair within its
// window is that flow's; on a muxed pair RTCP goes to the RTCP flow.
func (p *portScan) Datagram(d *netdecode.Datagram) {
	sc := p.sc
	best := -1
	for _, i := range sc.byPair[addrPair{d.Src, d.Dst}] {
		f := sc.flows[i]
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
	fresh := false
	for _, tag := range d.Frames {
		k := markKey{p.port, tag}
		if !sc.marks[k] {
			sc.marks[k], fresh = true, true
		}
	}
	if !fresh {
		return // already in the file (a SIP frame, or seen in an earlier window)
	}
	sc.flowFound[best]++
	if sc.media != nil {
		sc.media(best, d)
	}
	if sc.flows[best].RTCP {
		sc.res.RTCPFrames++
	} else {
		sc.res.RTPFrames++
	}
}

func looksRTCP(b []byte) bool {
	return len(b) >= 2 && b[1] >= rtcpMuxTypeMin && b[1] <= rtcpMuxTypeMax
}

// errScanCut ends a window's recorder read at the frame budget.
var errScanCut = errors.New("sip: export scan budget reached")

// run scans every window: first what the recorder holds from before each
// ring's oldest frame, then the rings, through one decoder per port and
// window so reassembly spans the two.
func (sc *exportScan) run(ctx context.Context, ws []window) error {
	defer sc.noteCut()
	for _, w := range ws {
		sc.ports = map[string]*portScan{}
		if sc.rec != nil && sc.needsRecorder(w) {
			st, err := sc.rec.Scan(ctx, recorder.Query{From: w.from, To: w.to.Add(time.Nanosecond)}, func(f *recorder.Frame) error {
				if f.Link == wire.LinkCANSocketCAN || f.Link == wire.LinkJ1708 || f.Link == wire.LinkJ2497 {
					return nil
				}
				if from, ok := sc.ringFrom[f.Port]; ok && !f.Time.Before(from) {
					return nil // the ring has it
				}
				if !sc.spend(f.Time) {
					return errScanCut
				}
				tag, ok := sc.recordedTag(f.Segment, f.Offset)
				if !ok {
					return errScanCut
				}
				if sc.trimmed != nil {
					sc.trimmed(wire.LinkType(f.Link), f.Data, f.OrigLen)
				}
				sc.port(f.Port).an.feedTagged(tag, f.Time, wire.LinkType(f.Link), f.Data)
				return nil
			})
			if st.Cut && (sc.cutAt.IsZero() || st.CutAt.Before(sc.cutAt)) {
				sc.cutAt = *st.CutAt
			}
			if errors.Is(err, errScanCut) {
				return nil
			}
			if err != nil {
				return err
			}
		}
		for _, name := range slices.Sorted(maps.Keys(sc.snaps)) {
			snap := sc.snaps[name]
			lo, hi := seqRange(snap, w)
			for seq := lo; seq < hi; seq++ {
				r, _ := snap.Get(seq)
				if !sc.spend(r.Time) {
					return nil
				}
				if sc.trimmed != nil {
					sc.trimmed(r.Link, r.Data, r.OrigLen)
				}
				sc.port(name).an.feedTagged(seq, r.Time, r.Link, r.Data)
			}
		}
	}
	return nil
}

// needsRecorder reports whether w starts before some ring's oldest frame
// (or a port has no ring): only then can the recorder add anything.
func (sc *exportScan) needsRecorder(w window) bool {
	if len(sc.ringFrom) < len(sc.snaps) || len(sc.snaps) == 0 {
		return true
	}
	for _, from := range sc.ringFrom {
		if w.from.Before(from) {
			return true
		}
	}
	return false
}

// spend takes one frame from the budget, noting where it ran out.
func (sc *exportScan) spend(t time.Time) bool {
	if sc.budget == 0 {
		if sc.cutAt.IsZero() || t.Before(sc.cutAt) {
			sc.cutAt = t
		}
		return false
	}
	sc.budget--
	return true
}

func (sc *exportScan) noteCut() {
	if !sc.cutAt.IsZero() {
		t := sc.cutAt
		sc.res.ScanCut, sc.res.ScanCutAt = true, &t
	}
}

func (sc *exportScan) recordedTag(segment string, off int64) (uint64, bool) {
	i, ok := sc.segIndex[segment]
	if !ok {
		if len(sc.segments) > maxTagSegment {
			return 0, false
		}
		i = len(sc.segments)
		sc.segments = append(sc.segments, segment)
		sc.segIndex[segment] = i
	}
	return recordedTag | uint64(i)<<tagOffsetBits | uint64(off)&tagOffsetMask, true
}

// fetch reads the marked frames: from the rings by sequence number, from
// the recorder by segment and offset, in capture order.
func (sc *exportScan) fetch(ctx context.Context) ([]exportFrame, error) {
	var out []exportFrame
	bySeg := map[int][]int64{}
	for k := range sc.marks {
		if k.tag&recordedTag != 0 {
			seg := int(k.tag &^ recordedTag >> tagOffsetBits)
			bySeg[seg] = append(bySeg[seg], int64(k.tag&tagOffsetMask))
			continue
		}
		if r, ok := sc.snaps[k.port].Get(k.tag); ok {
			out = append(out, exportFrame{port: k.port, tag: k.tag, time: r.Time, link: r.Link, data: r.Data, origLen: r.OrigLen})
		}
	}
	for seg, offs := range bySeg {
		slices.Sort(offs)
		name := sc.segments[seg]
		_, err := sc.rec.ReadFrames(ctx, name, offs, func(f *recorder.Frame) error {
			tag, _ := sc.recordedTag(name, f.Offset)
			out = append(out, exportFrame{port: f.Port, tag: tag, time: f.Time, link: wire.LinkType(f.Link), data: slices.Clone(f.Data), origLen: f.OrigLen})
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	sortFrames(out)
	return out, nil
}

// window is a span of capture time holding some dialog's or flow's packets.
type window struct{ from, to time.Time }

// mergeWindows returns the windows sorted and merged.
func mergeWindows(in []window) []window {
	ws := slices.Clone(in)
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

var (
	_ sink      = (*portScan)(nil)
	_ MediaHook = (*portScan)(nil)
)
