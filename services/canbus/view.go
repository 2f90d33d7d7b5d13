package canbus

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"fieldtap/drivers/wire"
	"fieldtap/services/ring"
)

// Status is one port's summary.
type Status struct {
	Name        string
	Bitrate     int
	Frames      uint64
	Standard    uint64
	Extended    uint64
	Remote      uint64
	FD          uint64 // CAN FD frames
	ErrorFrames uint64
	DistinctIDs int
	IDOverflow  uint64 // frames whose new id found the table full
	First       *time.Time
	Last        *time.Time
	// MeanLoad is bits/(bitrate·span) over the whole capture; nil with
	// a reason when the span is zero.
	MeanLoad       *float64
	MeanLoadReason string
	PeakLoad       float64
	Store          ring.Stats
	// Link is the driver's view (bitrate, mode, bus state, bus-offs,
	// restarts); nil with LinkReason when the source has none.
	Link       *Link
	LinkReason string
}

// Status summarises the port.
func (p *Port) Status() Status {
	link, why := p.linkView()
	p.mu.Lock()
	defer p.mu.Unlock()
	st := Status{
		Name: p.name, Bitrate: p.bitrate, Frames: p.total, Standard: p.std, Extended: p.ext,
		Remote: p.rtr, FD: p.fd, ErrorFrames: p.err, DistinctIDs: len(p.ids), IDOverflow: p.idOver,
		Store: p.frames.Stats(), Link: link, LinkReason: why,
	}
	if !p.first.IsZero() {
		f, l := p.first, p.last
		st.First, st.Last = &f, &l
	}
	if span := p.last.Sub(p.first).Seconds(); span > 0 {
		v := float64(p.bits) / (float64(p.bitrate) * span)
		st.MeanLoad = &v
	} else {
		st.MeanLoadReason = "fewer than two distinct frame times"
	}
	for _, s := range p.seconds {
		st.PeakLoad = max(st.PeakLoad, s.Load)
	}
	return st
}

// Name is the port's name.
func (p *Port) Name() string { return p.name }

// IDs returns the ID table sorted by id.
func (p *Port) IDs() []IDStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]IDStats, 0, len(p.ids))
	for _, st := range p.ids {
		c := *st
		c.lastFD = nil
		c.DLCs = slices.Clone(st.DLCs)
		c.IDHex = wire.FormatCANID(c.ID)
		if st.lastFD != nil {
			c.LastData = fmt.Sprintf("%X", st.lastFD[:st.lastLen])
		} else {
			c.LastData = fmt.Sprintf("%X", st.last[:st.lastLen])
		}
		c.ChangedBits = fmt.Sprintf("%016X", st.changed)
		c.ChangedByte = []int{}
		for i := range 8 {
			if st.changed>>(56-8*i)&0xFF != 0 {
				c.ChangedByte = append(c.ChangedByte, i)
			}
		}
		out = append(out, c)
	}
	// By the id with its flags: standard ids first, then extended, each in
	// id order (a row's position is its key for paging).
	slices.SortFunc(out, func(a, b IDStats) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

// Rate is frames per second over an id's first-to-last span, or nil when
// the span is zero.
func (s IDStats) Rate() *float64 {
	span := s.Last.Sub(s.First).Seconds()
	if s.Count < 2 || span <= 0 {
		return nil
	}
	v := float64(s.Count-1) / span
	return &v
}

// Seconds returns the bus-load timeline, oldest first.
func (p *Port) Seconds() []Second {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]Second, 0, len(p.seconds))
	out = append(out, p.seconds[p.secStart:]...)
	return append(out, p.seconds[:p.secStart]...)
}

// Frames returns a consistent view of the frame ring.
func (p *Port) Frames() ring.Snapshot[Record] { return p.frames.Snapshot() }

// FrameStats reports the port's frame ring: kept, evicted, limits.
func (p *Port) FrameStats() ring.Stats { return p.frames.Stats() }
