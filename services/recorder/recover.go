package recorder

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"fieldtap/services/recorder/pcapng"
)

// stateFile says whether a recorder was running: written at Open, and
// again by Close. Found "running" at the next Open, the last run ended
// without Close (a kill, a crash, a power cut).
const stateFile = "state.json"

type runState struct {
	Running bool      `json:"running"`
	At      time.Time `json:"at"`
}

// Recovery is what Open found and did.
type Recovery struct {
	At      time.Time
	Unclean bool // the last run ended without Close
	// Trusted closed segments were taken from their index unread.
	Trusted int
	// Scanned segments had no usable index (left open, or an index that
	// did not match the file) and were read block by block.
	Scanned []ScannedSegment
	Removed []string // empty segments, orphan indexes, temporary files
	Gap     *Gap     // the gap this start closes; nil on a first start
}

// ScannedSegment is one segment recovered by a scan.
type ScannedSegment struct {
	Name     string
	Frames   uint64
	Bytes    int64  // kept: whole blocks
	CutBytes int64  // torn tail removed
	Reason   string // why the scan stopped; empty at a clean end
}

type found struct {
	name    string
	digits  uint64
	created time.Time
	size    int64
	idx     *Index
}

// Open takes the directory (creating it), recovers it and returns a
// recorder ready for Port and Run. It fails when the directory cannot be
// made or locked, or another process records into it (ErrInUse).
func Open(o Options) (*Recorder, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(o.Dir, dirMode); err != nil {
		return nil, fmt.Errorf("recorder: %w", err)
	}
	lock, err := lockDir(filepath.Join(o.Dir, lockFile))
	if err != nil {
		return nil, fmt.Errorf("recorder: %w", err)
	}
	r := &Recorder{opt: o, lock: lock, ifIndex: map[ifKey]uint32{}, ports: map[string]*portRec{}}
	if err := r.recover(); err != nil {
		lock.Close()
		return nil, fmt.Errorf("recorder: recover %s: %w", o.Dir, err)
	}
	return r, nil
}

func (r *Recorder) recover() error {
	now := r.opt.Now()
	rec := Recovery{At: now.UTC(), Scanned: []ScannedSegment{}, Removed: []string{}}
	var prev runState
	if err := readSmallJSON(filepath.Join(r.opt.Dir, stateFile), maxGapsBytes, &prev); err != nil {
		return err
	}
	rec.Unclean = prev.Running
	segs, err := r.list(&rec)
	if err != nil {
		return err
	}
	var last uint64
	for _, s := range segs {
		x := s.idx
		if x == nil || x.Bytes != s.size || x.Name != s.name {
			sc, err := r.scanSegment(s, now)
			if err != nil {
				return err
			}
			x = sc.idx
			if x.Frames == 0 {
				r.remove(s.name, &rec)
				continue
			}
			rec.Scanned = append(rec.Scanned, sc.info)
			if err := writeJSON(indexPath(r.opt.Dir, s.name), x); err != nil {
				return err
			}
		} else {
			rec.Trusted++
		}
		// A recovered segment's full sequence number is the smallest one
		// after its predecessor's with its name's five digits.
		if s.idx != x {
			x.Seq = s.digits
			for len(r.closed) > 0 && x.Seq <= last {
				x.Seq += nameSeqModulo
			}
		}
		last = x.Seq
		if st, err := os.Stat(indexPath(r.opt.Dir, s.name)); err == nil {
			r.idxBytes += st.Size()
		}
		r.closed = append(r.closed, x)
	}
	if n := len(r.closed); n > 0 {
		r.nextSeq = r.closed[n-1].Seq + 1
	}
	if r.gaps, err = readGaps(r.opt.Dir); err != nil {
		return err
	}
	if err := readSmallJSON(filepath.Join(r.opt.Dir, pinsFile), maxPinsBytes, &r.pins); err != nil {
		return err
	}
	if err := readSmallJSON(filepath.Join(r.opt.Dir, marksFile), maxMarksBytes, &r.marks); err != nil {
		return err
	}
	if g := r.restartGap(rec, now); g != nil {
		rec.Gap = r.gaps.add(*g)
		if err := r.saveGaps(); err != nil {
			return err
		}
		c := rec.Gap.clone()
		rec.Gap = &c
	}
	r.recovery = rec
	r.enforceQuota()
	return writeJSON(filepath.Join(r.opt.Dir, stateFile), runState{Running: true, At: now.UTC()})
}

// restartGap is the time between the newest recorded frame and this
// start, with the per-port bounds after an unclean stop.
func (r *Recorder) restartGap(rec Recovery, now time.Time) *Gap {
	n := len(r.closed)
	if n == 0 || r.closed[n-1].Last == nil {
		return nil
	}
	newest := r.closed[n-1]
	to := now.UTC()
	g := &Gap{Reason: GapStopped, From: newest.Last.UTC(), To: &to, NotRecorded: map[string]uint64{}}
	if rec.Unclean {
		g.Reason = GapUncleanStop
		g.PortsLast = map[string]time.Time{}
		for _, p := range newest.Ports {
			g.PortsLast[p.Port] = p.Last.UTC()
		}
		if newest.Recovered != nil {
			g.CutBytes = newest.Recovered.CutBytes
		}
	}
	return g
}

// list reads the directory: segments of this prefix oldest first with
// their indexes, removing temporary files and orphan indexes.
func (r *Recorder) list(rec *Recovery) ([]found, error) {
	ents, err := os.ReadDir(r.opt.Dir)
	if err != nil {
		return nil, err
	}
	var segs []found
	idx := map[string]bool{}
	for _, e := range ents {
		name := e.Name()
		switch {
		case strings.HasSuffix(name, tmpExt):
			os.Remove(filepath.Join(r.opt.Dir, name))
			rec.Removed = append(rec.Removed, name)
		case strings.HasSuffix(name, segmentExt+indexExt):
			idx[strings.TrimSuffix(name, indexExt)] = true
		case e.Type().IsRegular():
			digits, created, ok := parseSegmentName(r.opt.Prefix, name)
			if !ok {
				continue // not ours: left alone
			}
			info, err := e.Info()
			if err != nil {
				return nil, err
			}
			segs = append(segs, found{name: name, digits: digits, created: created, size: info.Size()})
		}
	}
	for i := range segs {
		s := &segs[i]
		if idx[s.name] {
			delete(idx, s.name)
			if x, err := readIndex(indexPath(r.opt.Dir, s.name)); err == nil {
				s.idx = x
			}
		}
	}
	for name := range idx {
		os.Remove(indexPath(r.opt.Dir, name))
		rec.Removed = append(rec.Removed, name+indexExt)
	}
	slices.SortFunc(segs, func(a, b found) int {
		if a.idx != nil && b.idx != nil {
			return cmp.Compare(a.idx.Seq, b.idx.Seq)
		}
		if c := a.created.Compare(b.created); c != 0 {
			return c
		}
		return cmp.Compare(a.digits, b.digits)
	})
	return segs, nil
}

func (r *Recorder) remove(name string, rec *Recovery) {
	os.Remove(filepath.Join(r.opt.Dir, name))
	os.Remove(indexPath(r.opt.Dir, name))
	rec.Removed = append(rec.Removed, name)
}

type scanned struct {
	idx  *Index
	info ScannedSegment
}

// scanSegment reads a segment block by block, cuts it at its last whole
// block and rebuilds its index.
func (r *Recorder) scanSegment(s found, now time.Time) (scanned, error) {
	path := filepath.Join(r.opt.Dir, s.name)
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return scanned{}, err
	}
	defer f.Close()
	x := &Index{Version: indexVersion, Name: s.name, Created: s.created, Ports: []PortIndex{}, Interfaces: []IfaceIndex{}}
	sc := pcapng.NewScanner(f)
	var lastMark time.Time
	reason := ""
	for {
		rec, err := sc.Next()
		if err == io.EOF {
			break
		}
		var ce *pcapng.CorruptError
		if errors.As(err, &ce) {
			reason = ce.Reason
			break
		}
		if err != nil {
			return scanned{}, err
		}
		switch rec.Kind {
		case pcapng.KindInterface:
			x.Interfaces = append(x.Interfaces, IfaceIndex{Port: rec.Interface.Name, Link: rec.Interface.Link, Offset: rec.Offset})
		case pcapng.KindPacket:
			t := rec.Packet.Time
			x.startMark(rec.Offset, &lastMark, t)
			x.noteMin(t)
			x.note(rec.Interface.Name, rec.Interface.Link, t, len(rec.Packet.Data))
		}
	}
	keep := sc.Offset()
	cut := s.size - keep
	if cut > 0 {
		if err := f.Truncate(keep); err != nil {
			return scanned{}, fmt.Errorf("cut %s at %d: %w", s.name, keep, err)
		}
	}
	// Synced even with nothing cut: after a kill the tail may sit only in
	// the page cache, and the index written next vouches for every byte
	// it counts. A power cut before writeback would leave that index
	// trusted over a file whose tail reads as zeros.
	if err := fdatasync(f); err != nil {
		return scanned{}, fmt.Errorf("sync %s: %w", s.name, err)
	}
	x.Bytes = keep
	x.Closed = now.UTC()
	x.Recovered = &Recovered{At: now.UTC(), CutBytes: cut, Reason: reason}
	return scanned{idx: x, info: ScannedSegment{Name: s.name, Frames: x.Frames, Bytes: keep, CutBytes: cut, Reason: reason}}, nil
}
