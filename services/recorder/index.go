package recorder

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// indexVersion is written into every index; an index of another version
// is not trusted and its segment is scanned instead.
const indexVersion = 1

// maxIndexBytes bounds an index file read at boot: MaxSegmentAge of seek
// marks and MaxInterfaces ports fit with room to spare.
const maxIndexBytes = 4 << 20

// Index is a segment's sidecar (NAME.pcapng.idx): what search and
// listing need without opening the segment.
type Index struct {
	Version int         `json:"version"`
	Name    string      `json:"name"`
	Seq     uint64      `json:"seq"`
	Created time.Time   `json:"created"` // when the segment was opened (box clock)
	Closed  time.Time   `json:"closed"`  // when it was closed, or recovered
	Bytes   int64       `json:"bytes"`   // file size: whole blocks only
	Frames  uint64      `json:"frames"`
	First   *time.Time  `json:"first_frame"` // earliest frame time; null for none
	Last    *time.Time  `json:"last_frame"`  // latest frame time
	Ports   []PortIndex `json:"ports"`
	// Interfaces are the segment's interface blocks in order: a packet's
	// interface number indexes this list.
	Interfaces []IfaceIndex `json:"interfaces"`
	// Marks are seek points: every frame before MarkOffsets[i] has a time
	// before MarkBefore[i] (Unix ns), so a search for later frames may
	// start there.
	MarkOffsets []int64 `json:"mark_offsets"`
	MarkBefore  []int64 `json:"mark_before_ns"`
	// MarkMin[i] is the earliest frame time (Unix ns) between mark i and
	// the next, so a search for earlier frames may stop at a mark whose
	// following minima are all past its window.
	MarkMin []int64 `json:"mark_min_ns"`
	// Recovered is set when the segment was left open (a kill, a power
	// cut) and rebuilt by scanning it at boot.
	Recovered *Recovered `json:"recovered,omitempty"`
}

// PortIndex is one port's share of a segment.
type PortIndex struct {
	Port   string    `json:"port"`
	Links  []uint16  `json:"links"`
	Frames uint64    `json:"frames"`
	Bytes  uint64    `json:"bytes"` // recorded bytes (headers-only frames count what was kept)
	First  time.Time `json:"first_frame"`
	Last   time.Time `json:"last_frame"`
}

// IfaceIndex is one interface block: a port and a link type.
type IfaceIndex struct {
	Port   string `json:"port"`
	Link   uint16 `json:"link"`
	Offset int64  `json:"offset"` // of the interface block in the segment
}

// Recovered says what a boot-time scan found in a segment left open.
type Recovered struct {
	At       time.Time `json:"at"`
	CutBytes int64     `json:"cut_bytes"` // torn tail removed
	Reason   string    `json:"reason"`    // why the scan stopped; empty at a clean end
}

// indexPath is where name's index lives.
func indexPath(dir, name string) string { return filepath.Join(dir, name+indexExt) }

// note adds one frame to the index.
func (x *Index) note(port string, link uint16, t time.Time, n int) {
	x.Frames++
	if x.First == nil || t.Before(*x.First) {
		x.First = &t
	}
	if x.Last == nil || t.After(*x.Last) {
		x.Last = &t
	}
	i := slices.IndexFunc(x.Ports, func(p PortIndex) bool { return p.Port == port })
	if i < 0 {
		x.Ports = append(x.Ports, PortIndex{Port: port, First: t, Last: t})
		i = len(x.Ports) - 1
	}
	p := &x.Ports[i]
	p.Frames++
	p.Bytes += uint64(n)
	if t.Before(p.First) {
		p.First = t
	}
	if t.After(p.Last) {
		p.Last = t
	}
	if !slices.Contains(p.Links, link) {
		p.Links = append(p.Links, link)
	}
}

// startMark opens a seek point at off, before the frames written there,
// when markEvery has passed (on clock now) since the last one.
func (x *Index) startMark(off int64, lastMark *time.Time, now time.Time) {
	if len(x.MarkOffsets) > 0 && now.Sub(*lastMark) < markEvery {
		return
	}
	*lastMark = now
	b := int64(math.MinInt64)
	if x.Last != nil {
		b = x.Last.UnixNano() + 1 // every frame so far is at or before x.Last
	}
	x.MarkOffsets = append(x.MarkOffsets, off)
	x.MarkBefore = append(x.MarkBefore, b)
	x.MarkMin = append(x.MarkMin, math.MaxInt64)
}

// noteMin lowers the current seek point's earliest following frame time.
func (x *Index) noteMin(t time.Time) {
	if n := len(x.MarkMin); n > 0 {
		x.MarkMin[n-1] = min(x.MarkMin[n-1], t.UnixNano())
	}
}

// window returns the byte range of the segment that can hold frames in
// [from, to), given its size, and the interfaces declared before start.
func (x *Index) window(from, to time.Time, size int64) (start, end int64, ifs []IfaceIndex) {
	end = size
	first := -1
	for i, b := range x.MarkBefore {
		if b <= from.UnixNano() {
			start, first = x.MarkOffsets[i], i
		}
	}
	// Every frame from mark j on is at or after suffix[j]: stop at the
	// first mark past the start whose suffix is at or after to.
	suffix := int64(math.MaxInt64)
	for j := len(x.MarkMin) - 1; j > first && j >= 0; j-- {
		suffix = min(suffix, x.MarkMin[j])
		if suffix >= to.UnixNano() {
			end = x.MarkOffsets[j]
		}
	}
	return start, max(start, end), x.ifacesBefore(start)
}

// ifacesBefore is the interfaces declared before off.
func (x *Index) ifacesBefore(off int64) []IfaceIndex {
	var ifs []IfaceIndex
	for _, f := range x.Interfaces {
		if f.Offset < off {
			ifs = append(ifs, f)
		}
	}
	return ifs
}

// overlaps reports whether the segment holds frames in [from, to).
func (x *Index) overlaps(from, to time.Time) bool {
	return x.First != nil && x.Last != nil && x.Last.Compare(from) >= 0 && x.First.Before(to)
}

func (x *Index) clone() *Index {
	c := *x
	c.Ports = slices.Clone(x.Ports)
	for i := range c.Ports {
		c.Ports[i].Links = slices.Clone(c.Ports[i].Links)
	}
	c.Interfaces = slices.Clone(x.Interfaces)
	c.MarkOffsets = slices.Clone(x.MarkOffsets)
	c.MarkBefore = slices.Clone(x.MarkBefore)
	c.MarkMin = slices.Clone(x.MarkMin)
	return &c
}

func readIndex(path string) (*Index, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if st.Size() > maxIndexBytes {
		return nil, fmt.Errorf("index %s: %d bytes, over the %d-byte bound", path, st.Size(), maxIndexBytes)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var x Index
	if err := json.Unmarshal(b, &x); err != nil {
		return nil, fmt.Errorf("index %s: %w", path, err)
	}
	if x.Version != indexVersion {
		return nil, fmt.Errorf("index %s: version %d, want %d", path, x.Version, indexVersion)
	}
	if len(x.MarkOffsets) != len(x.MarkBefore) || len(x.MarkOffsets) != len(x.MarkMin) {
		return nil, fmt.Errorf("index %s: %d mark offsets for %d and %d mark times", path, len(x.MarkOffsets), len(x.MarkBefore), len(x.MarkMin))
	}
	return &x, nil
}

// writeJSON writes v to path atomically and durably: a temporary file,
// fsync, rename, fsync of the directory.
func writeJSON(path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	tmp := path + tmpExt
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, fileMode)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", tmp, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("sync %s: %w", tmp, err)
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return syncDir(filepath.Dir(path))
}
