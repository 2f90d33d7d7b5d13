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
	State  string     `json:"state"`            // recording, ram_only, closed
	Reason string     `json:"reason,omitempty"` // why ram_only
	Since  *time.Time `json:"since"`            // when ram_only began
	Dir    string     `json:"dir"`

	Segments     int        `json:"segments"` // closed and open
	Bytes        int64      `json:"bytes"`    // on disk, indexes included
	QuotaBytes   int64      `json:"quota_bytes"`
	QuotaOver    int64      `json:"quota_over_bytes"` // kept past the quota by pins
	FreeBytes    *int64     `json:"free_bytes"`       // left on the file system; null where unknown
	PinnedBytes  int64      `json:"pinned_bytes"`
	Pins         int        `json:"pins"`
	Oldest       *time.Time `json:"oldest_frame"` // on disk
	Newest       *time.Time `json:"newest_frame"` // written
	SegmentBytes int64      `json:"segment_bytes"`
	SegmentAge   string     `json:"segment_age"`

	BytesWritten uint64     `json:"bytes_written"`
	Writes       uint64     `json:"writes"`
	Syncs        uint64     `json:"syncs"`
	LastSync     *time.Time `json:"last_sync"`
	WriteErrors  uint64     `json:"write_errors"`
	Retries      uint64     `json:"retries"`
	Deleted      uint64     `json:"segments_deleted"` // by the quota

	Gaps        []Gap       `json:"gaps"` // newest last, at most 16; open gaps have a null to
	GapsTotal   int         `json:"gaps_total"`
	GapsDropped uint64      `json:"gaps_dropped"` // pushed out of the journal
	Recovery    Recovery    `json:"recovery"`
	Refill      RefillStats `json:"refill"`
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
	Name      string      `json:"name"`
	Seq       uint64      `json:"seq"`
	Open      bool        `json:"open"`
	Created   time.Time   `json:"created"`
	Closed    *time.Time  `json:"closed"`
	Bytes     int64       `json:"bytes"`
	Frames    uint64      `json:"frames"`
	First     *time.Time  `json:"first_frame"`
	Last      *time.Time  `json:"last_frame"`
	Ports     []PortIndex `json:"ports"`
	Pinned    bool        `json:"pinned"`
	Recovered *Recovered  `json:"recovered"`
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
