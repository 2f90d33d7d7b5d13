package recorder

import (
	"slices"
	"time"
)

// maxStatusGaps is how many of the newest gaps Status lists; Gaps has
// them all.
const maxStatusGaps = 16

// Status is the recorder as a whole.
type Status struct {
	State  string     // recording, ram_only, closed
	Reason string     // why ram_only
	Since  *time.Time // when ram_only began
	Dir    string

	Segments     int   // closed and open
	Bytes        int64 // on disk, indexes included
	QuotaBytes   int64
	QuotaOver    int64  // kept past the quota by pins
	FreeBytes    *int64 // left on the file system; nil where unknown
	PinnedBytes  int64
	Pins         int
	Oldest       *time.Time // on disk
	Newest       *time.Time // written
	SegmentBytes int64
	SegmentAge   string

	BytesWritten uint64
	Writes       uint64
	Syncs        uint64
	LastSync     *time.Time
	WriteErrors  uint64
	Retries      uint64
	Deleted      uint64 // by the quota

	Gaps        []Gap // newest last, at most 16; open gaps have a nil To
	GapsTotal   int
	GapsDropped uint64 // pushed out of the journal
	Recovery    Recovery
	Refill      RefillStats
}

// PortStatus is one port's recording, shown in capture_status.
type PortStatus struct {
	State       string `json:"state"`        // recording, ram_only, closed
	Frames      uint64 `json:"frames"`       // recorded (headers-only frames included)
	Bytes       uint64 `json:"bytes"`        // recorded bytes
	NotRecorded uint64 `json:"not_recorded"` // lost to a disk error, a full buffer or Close
	Trimmed     uint64 `json:"headers_only"` // recorded headers only (RTP)
	// Written and Synced are the newest frame times written to the
	// segment and made durable; null before any.
	Written *time.Time `json:"written_through"`
	Synced  *time.Time `json:"synced_through"`
	// Refilled is what the start-up refill gave this port's analysers;
	// null when it gave none.
	Refilled *PortRefill `json:"refilled"`
	LastGap  *Gap        `json:"last_gap"` // null when none touched this port in this run
}

// SegmentInfo is one segment for listing.
type SegmentInfo struct {
	Name      string
	Seq       uint64
	Open      bool
	Created   time.Time
	Closed    *time.Time
	Bytes     int64
	Frames    uint64
	First     *time.Time
	Last      *time.Time
	Ports     []PortIndex
	Pinned    bool
	Recovered *Recovered
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// Segments lists the ring oldest first, the open segment last.
func (r *Recorder) Segments() []SegmentInfo {
	vs := r.views()
	r.wmu.Lock()
	defer r.wmu.Unlock()
	out := make([]SegmentInfo, 0, len(vs))
	for _, v := range vs {
		x := v.idx
		si := SegmentInfo{Name: x.Name, Seq: x.Seq, Open: x.Closed.IsZero(), Created: x.Created, Closed: timePtr(x.Closed),
			Bytes: v.size, Frames: x.Frames, First: x.First, Last: x.Last, Ports: slices.Clone(x.Ports),
			Pinned: r.pinned(x), Recovered: x.Recovered}
		out = append(out, si)
	}
	return out
}

// Gaps returns every journaled gap oldest first, then the open ones.
func (r *Recorder) Gaps() []Gap {
	r.wmu.Lock()
	defer r.wmu.Unlock()
	return r.gapsLocked()
}

func (r *Recorder) gapsLocked() []Gap {
	out := make([]Gap, 0, len(r.gaps.Gaps)+2)
	for _, g := range r.gaps.Gaps {
		out = append(out, g.clone())
	}
	r.mu.Lock()
	for _, g := range []*Gap{r.diskGap, r.bufGap} {
		if g != nil {
			out = append(out, g.clone())
		}
	}
	r.mu.Unlock()
	return out
}

// Status reports the recorder.
func (r *Recorder) Status() Status {
	r.wmu.Lock()
	defer r.wmu.Unlock()
	st := Status{
		State: StateRecording, Dir: r.opt.Dir, QuotaBytes: r.opt.QuotaBytes, QuotaOver: r.st.quotaOver,
		SegmentBytes: r.opt.SegmentBytes, SegmentAge: r.opt.SegmentAge.String(),
		Bytes: r.usedBytes(), Segments: len(r.closed), Pins: len(r.pins.Pins),
		BytesWritten: r.st.bytesWritten, Writes: r.st.writes, Syncs: r.st.syncs, LastSync: timePtr(r.lastSync),
		WriteErrors: r.st.writeErrors, Retries: r.st.retries, Deleted: r.st.deleted,
		GapsDropped: r.gaps.Dropped, Recovery: r.recovery, Refill: r.refill,
	}
	if r.seg != nil {
		st.Segments++
	}
	if free, err := freeBytes(r.opt.Dir); err == nil {
		st.FreeBytes = &free
	}
	for _, x := range r.closed {
		if r.pinned(x) {
			st.PinnedBytes += x.Bytes
		}
		if x.First != nil && (st.Oldest == nil || x.First.Before(*st.Oldest)) {
			st.Oldest = x.First
		}
		if x.Last != nil && (st.Newest == nil || x.Last.After(*st.Newest)) {
			st.Newest = x.Last
		}
	}
	// The open segment is on disk too: until the first one closes it
	// holds the oldest frame.
	if r.seg != nil && r.seg.idx.First != nil && (st.Oldest == nil || r.seg.idx.First.Before(*st.Oldest)) {
		t := *r.seg.idx.First
		st.Oldest = &t
	}
	if r.seg != nil && r.seg.idx.Last != nil && (st.Newest == nil || r.seg.idx.Last.After(*st.Newest)) {
		t := *r.seg.idx.Last
		st.Newest = &t
	}
	gaps := r.gapsLocked()
	st.GapsTotal = len(gaps)
	st.Gaps = gaps[max(0, len(gaps)-maxStatusGaps):]
	r.mu.Lock()
	switch {
	case r.shut:
		st.State = StateClosed
	case r.ramOnly:
		st.State, st.Reason, st.Since = StateRAMOnly, r.ramWhy, timePtr(r.ramSince)
	}
	r.mu.Unlock()
	return st
}

// Status reports this port's recording.
func (p *Port) Status() PortStatus {
	r := p.r
	r.wmu.Lock()
	refill, ok := r.refill.Ports[p.st.name]
	r.wmu.Unlock()
	r.mu.Lock()
	defer r.mu.Unlock()
	s := p.st
	ps := PortStatus{State: StateRecording, Frames: s.frames, Bytes: s.bytes, NotRecorded: s.notRecorded, Trimmed: s.trimmed,
		Written: timePtr(s.written), Synced: timePtr(s.synced)}
	switch {
	case r.shut:
		ps.State = StateClosed
	case r.ramOnly:
		ps.State = StateRAMOnly
	}
	if ok {
		ps.Refilled = &refill
	}
	if s.lastGap != nil {
		g := s.lastGap.clone()
		ps.LastGap = &g
	}
	return ps
}
