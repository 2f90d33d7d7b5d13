package recorder

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"net/netip"
	"slices"
	"time"

	"fieldtap/drivers/wire"
	"fieldtap/services/netdecode"
)

// Find bounds: hits are listed, so they are few; the head shown is enough
// to tell frames apart.
const (
	MaxFindHits     = 1000
	DefaultFindHits = 100
	HeadBytes       = 64
)

// Match is what Find looks for in a frame; every field set must hold.
type Match struct {
	// CAN: the id with its flag bits, compared under Mask (zero Mask: all
	// bits); only frames on LINKTYPE_CAN_SOCKETCAN.
	CANID   uint32
	CANMask uint32
	HasCAN  bool
	// J1708: the message's MID (first byte).
	MID    uint8
	HasMID bool
	// IP: either address of the frame's first IP packet is Host; either
	// transport port is L4Port (0: any).
	Host   netip.Addr
	L4Port uint16
	// Contains: these bytes appear anywhere in the recorded frame.
	Contains []byte
}

func (m Match) check() error {
	if len(m.Contains) > HeadBytes*4 {
		return fmt.Errorf("recorder: contains pattern of %d bytes: at most %d", len(m.Contains), HeadBytes*4)
	}
	return nil
}

// Matches reports whether f satisfies m, opening the tunnels on
// vxlanPorts as the SPAN decoder does.
func (m Match) Matches(f *Frame, vxlanPorts []uint16) bool {
	if m.HasCAN {
		if f.Link != wire.LinkCANSocketCAN {
			return false
		}
		id, _, err := wire.DecodeCAN(f.Data)
		mask := m.CANMask
		if mask == 0 {
			mask = ^uint32(0)
		}
		if err != nil || id&mask != m.CANID&mask {
			return false
		}
	}
	if m.HasMID && (f.Link != wire.LinkJ1708 && f.Link != wire.LinkJ2497 || len(f.Data) == 0 || f.Data[0] != m.MID) {
		return false
	}
	if m.Host.IsValid() || m.L4Port != 0 {
		l, ok := netdecode.Locate(wire.LinkType(f.Link), f.Data, vxlanPorts)
		if !ok {
			return false
		}
		// A tunnelled frame matches on the mirrored packet or on the
		// tunnel's own endpoints.
		ends := [...]netip.AddrPort{l.Src, l.Dst, l.OuterSrc, l.OuterDst}
		if m.Host.IsValid() && !slices.ContainsFunc(ends[:], func(a netip.AddrPort) bool { return a.Addr() == m.Host }) {
			return false
		}
		if m.L4Port != 0 && !slices.ContainsFunc(ends[:], func(a netip.AddrPort) bool { return a.IsValid() && a.Port() == m.L4Port }) {
			return false
		}
	}
	return len(m.Contains) == 0 || bytes.Contains(f.Data, m.Contains)
}

// Hit is one frame Find found.
type Hit struct {
	Segment string
	Offset  int64 // of its block in the segment
	Port    string
	Link    uint16
	Time    time.Time
	Len     int
	OrigLen int
	Head    string // hex of the first 64 bytes
}

// Found is Find's answer.
type Found struct {
	Hits []Hit
	// Truncated is true when a match past limit was found and the
	// search stopped at it (Scan.Matched is then limit+1): later frames
	// may match too.
	Truncated bool
	Scan      ScanStats
}

// Find lists the recorded frames in q that satisfy m, at most limit
// (0: DefaultFindHits; at most MaxFindHits), bounded as Scan is.
func (r *Recorder) Find(ctx context.Context, q Query, m Match, limit int) (Found, error) {
	if limit == 0 {
		limit = DefaultFindHits
	}
	if limit < 0 || limit > MaxFindHits {
		return Found{}, fmt.Errorf("recorder: limit %d: want 1 to %d", limit, MaxFindHits)
	}
	if err := m.check(); err != nil {
		return Found{}, err
	}
	out := Found{Hits: []Hit{}}
	st, err := r.scan(ctx, q, func(f *Frame) bool { return m.Matches(f, r.opt.VXLANPorts) }, func(f *Frame) error {
		if len(out.Hits) == limit {
			out.Truncated = true
			return ErrStop
		}
		out.Hits = append(out.Hits, Hit{Segment: f.Segment, Offset: f.Offset, Port: f.Port, Link: f.Link, Time: f.Time,
			Len: len(f.Data), OrigLen: max(f.OrigLen, len(f.Data)), Head: hex.EncodeToString(f.Data[:min(len(f.Data), HeadBytes)])})
		return nil
	})
	out.Scan = st
	return out, err
}
