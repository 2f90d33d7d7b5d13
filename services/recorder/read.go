package recorder

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"fieldtap/services/recorder/pcapng"
)

// Scan bounds: a search reads at most MaxScanBytes of segments, so one
// call cannot keep a small board's disk busy for minutes. Typed int64,
// as Query.MaxBytes: 4 GiB does not fit a 32-bit int (the armv7 boards).
const (
	DefaultScanBytes int64 = 256 << 20
	MaxScanBytes     int64 = 4 << 30
	// progressEvery is how many bytes a scan reads between progress calls.
	progressEvery = 1 << 20
	// ctxEvery is how many blocks a scan reads between context checks.
	ctxEvery = 1024
)

// ErrStop, returned by a Scan or Refill callback, ends the read early
// without an error.
var ErrStop = errors.New("recorder: stop")

// Frame is one recorded frame as a read returns it. Data aliases the
// reader's buffer: it is valid only during the callback.
type Frame struct {
	Port    string
	Link    uint16
	Time    time.Time
	Data    []byte
	OrigLen int
	Segment string // the segment file's name
	Offset  int64  // of the frame's block in the segment
}

// Query selects recorded frames: those captured in [From, To) on Ports
// (empty: every port), reading at most MaxBytes of segments.
type Query struct {
	From, To time.Time
	Ports    []string
	MaxBytes int64 // 0: DefaultScanBytes
	// Progress, when set, is called about every MiB read and once at the end.
	Progress func(Progress)
}

// Progress is a scan's position.
type Progress struct {
	Segments     int   // segments the query touches
	SegmentsRead int   // of which finished
	BytesPlanned int64 // bytes of their windows
	BytesRead    int64
	Frames       uint64 // frames read (matching or not)
}

// ScanStats says what a scan read and where it stopped short.
type ScanStats struct {
	Progress
	// Matched counts the frames read that met the query (its window and
	// ports; Find's criteria too), each given to the callback.
	Matched uint64
	// Cut is true when MaxBytes ended the scan; frames from CutAt on were
	// not read.
	Cut   bool
	CutAt *time.Time
	// Gone counts segments the quota deleted between listing and reading.
	Gone int
	// Corrupt names segments that stopped being whole blocks before their
	// indexed end (a disk fault since they were written).
	Corrupt []string
}

// view is a segment as a reader sees it at one moment.
type view struct {
	path string
	idx  *Index
	size int64 // read no further: whole blocks written so far
}

// views returns every segment, oldest first, the open one last; the
// index of each is a copy.
func (r *Recorder) views() []view {
	r.wmu.Lock()
	defer r.wmu.Unlock()
	out := make([]view, 0, len(r.closed)+1)
	for _, x := range r.closed {
		out = append(out, view{path: filepath.Join(r.opt.Dir, x.Name), idx: x, size: x.Bytes})
	}
	if s := r.seg; s != nil {
		out = append(out, view{path: s.path, idx: s.idx.clone(), size: s.size})
	}
	return out
}

func (q Query) check() (Query, error) {
	if q.From.IsZero() || q.To.IsZero() || !q.To.After(q.From) {
		return q, fmt.Errorf("recorder: query from %v to %v: want both, to after from", q.From, q.To)
	}
	if q.MaxBytes == 0 {
		q.MaxBytes = DefaultScanBytes
	}
	if q.MaxBytes < 0 || q.MaxBytes > MaxScanBytes {
		return q, fmt.Errorf("recorder: max bytes %d: want 1 to %d", q.MaxBytes, MaxScanBytes)
	}
	return q, nil
}

// span is the part of one segment a read covers.
type span struct {
	v          view
	start, end int64
	ifs        []IfaceIndex
}

// Scan calls fn for every recorded frame matching q, segment by segment
// oldest first; within a segment frames come in the order they were
// recorded (each port's in capture order). It stops at the end, at
// q.MaxBytes (ScanStats.Cut), when ctx ends (ctx's error) or when fn
// returns an error (ErrStop: no error).
func (r *Recorder) Scan(ctx context.Context, q Query, fn func(*Frame) error) (ScanStats, error) {
	return r.scan(ctx, q, nil, fn)
}

// scan is Scan giving fn only the frames that also pass also (Find's
// criteria), so ScanStats.Matched counts what matched, not what was read.
func (r *Recorder) scan(ctx context.Context, q Query, also func(*Frame) bool, fn func(*Frame) error) (ScanStats, error) {
	q, err := q.check()
	if err != nil {
		return ScanStats{}, err
	}
	var spans []span
	for _, v := range r.views() {
		if !v.idx.overlaps(q.From, q.To) {
			continue
		}
		start, end, ifs := v.idx.window(q.From, q.To, v.size)
		spans = append(spans, span{v: v, start: start, end: end, ifs: ifs})
	}
	match := func(f *Frame) bool {
		return !f.Time.Before(q.From) && f.Time.Before(q.To) && (len(q.Ports) == 0 || slices.Contains(q.Ports, f.Port)) &&
			(also == nil || also(f))
	}
	return r.read(ctx, spans, q.MaxBytes, q.Progress, match, fn)
}

func (r *Recorder) read(ctx context.Context, spans []span, budget int64, progress func(Progress), match func(*Frame) bool, fn func(*Frame) error) (ScanStats, error) {
	st := ScanStats{Progress: Progress{Segments: len(spans)}, Corrupt: []string{}}
	for _, s := range spans {
		st.BytesPlanned += s.end - s.start
	}
	next := int64(progressEvery)
	report := func() {
		if progress != nil {
			progress(st.Progress)
		}
	}
	defer report()
	for _, s := range spans {
		err := r.readSpan(ctx, s, &st, func(rec *pcapng.Record) error {
			st.BytesRead += int64(rec.Len)
			if st.BytesRead > budget {
				st.Cut = true
				t := rec.Packet.Time
				st.CutAt = &t
				return ErrStop
			}
			if st.BytesRead >= next {
				next += progressEvery
				report()
			}
			if rec.Kind != pcapng.KindPacket {
				return nil
			}
			st.Frames++
			f := Frame{Port: rec.Interface.Name, Link: rec.Interface.Link, Time: rec.Packet.Time, Data: rec.Packet.Data,
				OrigLen: rec.Packet.OrigLen, Segment: filepath.Base(s.v.path), Offset: rec.Offset}
			if !match(&f) {
				return nil
			}
			st.Matched++
			return fn(&f)
		})
		if errors.Is(err, ErrStop) {
			return st, nil
		}
		if err != nil {
			return st, err
		}
		st.SegmentsRead++
	}
	return st, nil
}

// readSpan reads the blocks of one segment in [s.start, s.end).
func (r *Recorder) readSpan(ctx context.Context, s span, st *ScanStats, fn func(*pcapng.Record) error) error {
	f, err := os.Open(s.v.path)
	if errors.Is(err, os.ErrNotExist) {
		st.Gone++
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	var sc *pcapng.Scanner
	lr := io.LimitReader(f, s.end-s.start)
	if s.start == 0 {
		sc = pcapng.NewScanner(lr)
	} else {
		if _, err := f.Seek(s.start, io.SeekStart); err != nil {
			return err
		}
		ifs := make([]pcapng.Interface, len(s.ifs))
		for i, x := range s.ifs {
			ifs[i] = pcapng.Interface{Name: x.Port, Link: x.Link}
		}
		sc = pcapng.NewScannerAt(lr, s.start, ifs)
	}
	for n := 0; ; n++ {
		if n%ctxEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		rec, err := sc.Next()
		if err == io.EOF {
			return nil
		}
		var ce *pcapng.CorruptError
		if errors.As(err, &ce) {
			st.Corrupt = append(st.Corrupt, fmt.Sprintf("%s: %s", filepath.Base(s.v.path), ce.Error()))
			return nil
		}
		if err != nil {
			return err
		}
		if err := fn(&rec); err != nil {
			return err
		}
	}
}

// RefillStats says what Refill gave the analysers.
type RefillStats struct {
	Budget   int64
	Segments int
	Bytes    int64 // segment bytes read
	Frames   uint64
	From     *time.Time // earliest frame refilled
	To       *time.Time
	Ports    map[string]PortRefill
	// Older is true when recorded frames older than From stay on disk
	// only: the budget did not reach them (search finds them).
	Older bool
}

// PortRefill is one port's share of a refill.
type PortRefill struct {
	Frames uint64    `json:"frames"`
	From   time.Time `json:"from"`
	To     time.Time `json:"to"`
}

// Refill calls fn with the frames of the newest closed segments whose
// bytes fit budget, oldest first, so stores emptied by a restart hold
// what the box saw before it. Run it after Open and before the ports
// start writing; call it once.
func (r *Recorder) Refill(ctx context.Context, budget int64, fn func(*Frame) error) (RefillStats, error) {
	rs := RefillStats{Budget: budget, Ports: map[string]PortRefill{}}
	var vs []view
	for _, v := range r.views() {
		if v.idx.Closed.IsZero() {
			continue // the open segment is this run's
		}
		vs = append(vs, v)
	}
	var spans []span
	left := budget
	for i := len(vs) - 1; i >= 0 && left > 0; i-- {
		v := vs[i]
		s := span{v: v, end: v.size}
		if v.size > left {
			// The newest part of an older segment that fits: from the
			// first seek mark that leaves no more than left to read.
			j := slices.IndexFunc(v.idx.MarkOffsets, func(o int64) bool { return v.size-o <= left })
			if j < 0 {
				rs.Older = true
				break
			}
			s.start = v.idx.MarkOffsets[j]
			s.ifs = v.idx.ifacesBefore(s.start)
			rs.Older = true
		}
		left -= s.end - s.start
		spans = append(spans, s)
		if s.start > 0 {
			break
		}
		if i > 0 && left <= 0 {
			rs.Older = true
		}
	}
	slices.Reverse(spans)
	st, err := r.read(ctx, spans, budget+1, nil, func(*Frame) bool { return true }, func(f *Frame) error {
		t := f.Time
		if rs.From == nil || t.Before(*rs.From) {
			rs.From = &t
		}
		if rs.To == nil || t.After(*rs.To) {
			rs.To = &t
		}
		p := rs.Ports[f.Port]
		if p.Frames == 0 || t.Before(p.From) {
			p.From = t
		}
		if t.After(p.To) {
			p.To = t
		}
		p.Frames++
		rs.Ports[f.Port] = p
		return fn(f)
	})
	rs.Segments, rs.Bytes, rs.Frames = len(spans), st.BytesRead, st.Matched
	r.wmu.Lock()
	r.refill = rs
	r.wmu.Unlock()
	return rs, err
}

// ReadFrames reads the frames whose blocks start at offsets (ascending)
// in one segment, as Scan reported them, and returns how many it could
// not read (the segment deleted by the quota since, or an offset that
// is not a frame).
func (r *Recorder) ReadFrames(ctx context.Context, segment string, offsets []int64, fn func(*Frame) error) (missing int, err error) {
	var v *view
	for _, x := range r.views() {
		if x.idx.Name == segment {
			v = &x
			break
		}
	}
	if v == nil {
		return len(offsets), nil
	}
	f, err := os.Open(v.path)
	if errors.Is(err, os.ErrNotExist) {
		return len(offsets), nil
	}
	if err != nil {
		return 0, err
	}
	defer f.Close()
	for i, off := range offsets {
		if err := ctx.Err(); err != nil {
			return missing + len(offsets) - i, err
		}
		if off <= 0 || off >= v.size {
			missing++
			continue
		}
		if _, err := f.Seek(off, io.SeekStart); err != nil {
			return missing + len(offsets) - i, err
		}
		ifs := v.idx.ifacesBefore(off)
		pifs := make([]pcapng.Interface, len(ifs))
		for j, x := range ifs {
			pifs[j] = pcapng.Interface{Name: x.Port, Link: x.Link}
		}
		rec, err := pcapng.NewScannerAt(io.LimitReader(f, v.size-off), off, pifs).Next()
		if err != nil || rec.Kind != pcapng.KindPacket {
			missing++
			continue
		}
		fr := Frame{Port: rec.Interface.Name, Link: rec.Interface.Link, Time: rec.Packet.Time, Data: rec.Packet.Data,
			OrigLen: rec.Packet.OrigLen, Segment: segment, Offset: off}
		if err := fn(&fr); err != nil {
			return missing, err
		}
	}
	return missing, nil
}
