package recorder

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"fieldtap/drivers/wire"
	"fieldtap/services/recorder/pcapng"
)

// Recording states, as Status and PortStatus report them.
const (
	StateRecording = "recording"
	StateRAMOnly   = "ram_only" // a write failed; frames live in the stores only
	StateClosed    = "closed"   // Close was called
)

// Snap lengths written in each interface block, by link type.
const (
	snapEthernet = 262144 // tcpdump's default
	snapCAN      = 72     // struct canfd_frame: a CAN FD frame's 64 bytes
)

type ifKey struct {
	port string
	link uint16
}

// portRec is one port's recording counters, guarded by Recorder.mu.
type portRec struct {
	name        string
	frames      uint64
	bytes       uint64
	notRecorded uint64
	trimmed     uint64
	// dropRun frames were not recorded since the last recorded one; the
	// next recorded frame carries a comment saying so.
	dropRun    uint64
	dropReason string
	written    time.Time // newest frame time written to the segment
	synced     time.Time // newest frame time made durable
	lastGap    *Gap
	// The interface of the last link type written: interface numbers
	// never change once given, so most frames skip the map.
	link   uint16
	linkID uint32
	linkOK bool
}

// openSeg is the segment being written, guarded by Recorder.wmu.
type openSeg struct {
	f        *os.File
	path     string
	idx      *Index
	size     int64 // whole blocks written
	created  time.Time
	lastMark time.Time
	dirty    bool // written since the last fdatasync
}

// Recorder writes every registered port into one segment ring. Port
// writers call Write from their consumer goroutines; Run writes and
// syncs; readers may call the read side at any time.
type Recorder struct {
	opt  Options
	lock *os.File

	// mu guards the front: what ports encode between writes.
	mu       sync.Mutex
	pending  []byte
	spare    []byte
	cur      batch
	ifaces   []ifKey
	ifIndex  map[ifKey]uint32
	ports    map[string]*portRec
	ramOnly  bool
	ramSince time.Time
	ramWhy   string
	diskGap  *Gap // open while ramOnly
	bufGap   *Gap // open while frames are refused for a full buffer
	shut     bool

	// wmu guards the disk side; it is taken before mu, never after.
	wmu       sync.Mutex
	seg       *openSeg
	closed    []*Index // oldest first
	idxBytes  int64    // bytes of the closed segments' index files
	nextSeq   uint64
	gaps      gapJournal
	marks     markJournal // guarded by wmu
	pins      pinFile
	lastSync  time.Time
	lastRetry time.Time
	st        counters
	recovery  Recovery
	refill    RefillStats
}

// counters are the disk side's totals, guarded by wmu.
type counters struct {
	bytesWritten uint64
	writes       uint64
	syncs        uint64
	writeErrors  uint64
	retries      uint64
	deleted      uint64
	quotaOver    int64 // bytes over the quota that pins keep
}

// Port is one port's handle for writing frames.
type Port struct {
	r  *Recorder
	st *portRec
}

// Port returns the handle for name, creating its counters on first use.
func (r *Recorder) Port(name string) *Port {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.ports[name]
	if st == nil {
		// Until this run loses frames of its own, the port's last gap is
		// the one this start closed: the box was not recording.
		st = &portRec{name: name, lastGap: r.recovery.Gap}
		r.ports[name] = st
	}
	return &Port{r: r, st: st}
}

// Write records one frame: data is copied before Write returns. origLen
// is the length on the wire (0 means len(data)).
func (p *Port) Write(t time.Time, link uint16, data []byte, origLen int) {
	p.r.write(p.st, t, link, data, origLen, len(data))
}

// WriteHeaders records only the first keep bytes of data (RTP headers
// only); the block says the frame's full length.
func (p *Port) WriteHeaders(t time.Time, link uint16, data []byte, origLen, keep int) {
	p.r.write(p.st, t, link, data, origLen, min(max(keep, 0), len(data)))
}

func (r *Recorder) write(st *portRec, t time.Time, link uint16, data []byte, origLen, keep int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.shut:
		st.notRecorded++
		return
	case r.ramOnly:
		st.notRecorded++
		st.dropRun++
		st.dropReason = GapDiskError
		r.diskGap.NotRecorded[st.name]++
		return
	}
	id := st.linkID
	if !st.linkOK || st.link != link {
		var ok bool
		if id, ok = r.iface(st.name, link); !ok {
			st.notRecorded++
			return
		}
		st.link, st.linkID, st.linkOK = link, id, true
	}
	pkt := pcapng.Packet{Interface: id, Time: t, Data: data[:keep], OrigLen: max(origLen, len(data))}
	if st.dropRun > 0 {
		pkt.Comment = fmt.Sprintf("fieldtap: %d frames of %s before this one were not recorded (%s)", st.dropRun, st.name, st.dropReason)
	}
	if len(r.pending)+pcapng.EPBSize(pkt) > r.opt.MaxPendingBytes {
		st.notRecorded++
		st.dropRun++
		st.dropReason = GapBufferFull
		if r.bufGap == nil {
			r.bufGap = &Gap{Reason: GapBufferFull, From: t, NotRecorded: map[string]uint64{}}
		}
		r.bufGap.NotRecorded[st.name]++
		st.lastGap = r.bufGap
		return
	}
	r.pending = pcapng.AppendEPB(r.pending, pkt)
	st.dropRun = 0
	st.frames++
	st.bytes += uint64(keep)
	if keep < len(data) {
		st.trimmed++
	}
	r.cur.note(st, link, t, keep)
}

// iface returns the interface number of (port, link), declaring it in
// the pending bytes on first use; the caller holds mu.
func (r *Recorder) iface(port string, link uint16) (uint32, bool) {
	k := ifKey{port, link}
	if id, ok := r.ifIndex[k]; ok {
		return id, true
	}
	if len(r.ifaces) >= pcapng.MaxInterfaces {
		return 0, false
	}
	id := uint32(len(r.ifaces))
	r.ifaces = append(r.ifaces, k)
	r.ifIndex[k] = id
	r.cur.ifaces = append(r.cur.ifaces, batchIface{port: port, link: link, offset: len(r.pending)})
	r.pending = pcapng.AppendIDB(r.pending, describe(k))
	return id, true
}

// describe is the interface block of (port, link): its name is the port.
func describe(k ifKey) pcapng.Interface {
	ifc := pcapng.Interface{Link: k.link, Name: k.port, SnapLen: snapEthernet}
	switch k.link {
	case wire.LinkCANSocketCAN:
		ifc.SnapLen, ifc.Description = snapCAN, "SocketCAN can_frame or canfd_frame (CANFD_FDF in byte 5), id big-endian (LINKTYPE_CAN_SOCKETCAN)"
	case wire.LinkJ1708:
		ifc.SnapLen, ifc.Description = wire.MaxJ1708Message, "J1708 message: MID, data, checksum (LINKTYPE_USER0; fieldtap docs/j1708.lua)"
	case wire.LinkJ2497:
		ifc.SnapLen, ifc.Description = wire.MaxJ1708Message, "J2497 (PLC4TRUCKS) message in J1708 layout (LINKTYPE_USER1; fieldtap docs/j1708.lua)"
	}
	return ifc
}

// Run writes pending frames every FlushInterval and syncs every
// SyncInterval until ctx ends. Close writes what is left.
func (r *Recorder) Run(ctx context.Context) {
	t := time.NewTicker(FlushInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			r.Flush()
		}
	}
}

// Flush writes the pending frames now, rotating, syncing and retrying a
// failed disk as their intervals come due.
func (r *Recorder) Flush() { r.flush(false) }

func (r *Recorder) flush(final bool) {
	r.wmu.Lock()
	defer r.wmu.Unlock()
	now := r.opt.Now()
	r.mu.Lock()
	buf, b := r.pending, r.cur
	r.pending, r.spare = r.spare[:0], nil
	r.cur = batch{ifaceBase: len(r.ifaces)}
	header := append([]ifKey(nil), r.ifaces[:b.ifaceBase]...)
	ramOnly := r.ramOnly
	r.mu.Unlock()

	if ramOnly {
		// Frames encoded before the failure are lost with it; nothing
		// else is encoded while RAM-only, so a retry's header declares
		// every interface and no pending block repeats one.
		r.lose(&b, GapDiskError)
		if final || now.Sub(r.lastRetry) >= retryEvery {
			r.retry(now)
		}
	} else if len(buf) > 0 {
		if r.seg != nil && (r.seg.size+int64(len(buf)) > r.opt.SegmentBytes || now.Sub(r.seg.created) >= r.opt.SegmentAge) {
			r.closeSegment(now)
		}
		if r.seg == nil {
			if err := r.openSegment(now, header); err != nil {
				r.fail(now, err, &b)
			}
		}
		if r.seg != nil {
			r.writeBatch(now, buf, &b)
		}
	}
	if r.seg != nil && r.seg.dirty && (final || now.Sub(r.lastSync) >= SyncInterval) {
		r.sync(now)
	}
	if r.seg != nil && len(buf) == 0 && now.Sub(r.seg.created) >= r.opt.SegmentAge {
		r.closeSegment(now) // a quiet segment is closed at its age, so its index exists
	}
	r.mu.Lock()
	r.spare = buf[:0]
	if r.bufGap != nil && len(buf) > 0 && !r.ramOnly {
		r.closeGap(&r.bufGap, now)
	}
	r.mu.Unlock()
}

// openSegment creates the next segment with a section header and the
// interfaces declared so far, durably (file and directory entry).
func (r *Recorder) openSegment(now time.Time, ifaces []ifKey) error {
	name := segmentName(r.opt.Prefix, r.nextSeq, now)
	path := filepath.Join(r.opt.Dir, name)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fileMode)
	if err != nil {
		return fmt.Errorf("create segment: %w", err)
	}
	idx := &Index{Version: indexVersion, Name: name, Seq: r.nextSeq, Created: now.UTC(), Ports: []PortIndex{}, Interfaces: []IfaceIndex{}}
	head := pcapng.AppendSHB(nil, r.opt.App)
	for _, k := range ifaces {
		idx.Interfaces = append(idx.Interfaces, IfaceIndex{Port: k.port, Link: k.link, Offset: int64(len(head))})
		head = pcapng.AppendIDB(head, describe(k))
	}
	if _, err = f.Write(head); err == nil {
		err = fdatasync(f)
	}
	if err == nil {
		err = syncDir(r.opt.Dir)
	}
	if err != nil {
		f.Close()
		os.Remove(path)
		return fmt.Errorf("start segment %s: %w", name, err)
	}
	r.nextSeq++
	r.seg = &openSeg{f: f, path: path, idx: idx, size: int64(len(head)), created: now}
	r.lastSync = now
	return nil
}

// writeBatch appends buf to the segment with one write; on failure the
// segment is cut back to its last whole block and the batch's frames are
// counted as not recorded.
func (r *Recorder) writeBatch(now time.Time, buf []byte, b *batch) {
	s := r.seg
	off := s.size
	if _, err := s.f.Write(buf); err != nil {
		if terr := s.f.Truncate(off); terr != nil {
			err = errors.Join(err, fmt.Errorf("cut back to %d: %w", off, terr))
		}
		r.fail(now, err, b)
		return
	}
	s.idx.startMark(off, &s.lastMark, now)
	if !b.min.IsZero() {
		s.idx.noteMin(b.min)
	}
	for _, f := range b.ifaces {
		s.idx.Interfaces = append(s.idx.Interfaces, IfaceIndex{Port: f.port, Link: f.link, Offset: off + int64(f.offset)})
	}
	b.fold(s.idx)
	s.size += int64(len(buf))
	s.dirty = true
	r.st.writes++
	r.st.bytesWritten += uint64(len(buf))
	r.mu.Lock()
	for _, p := range b.ports {
		if p.last.After(p.st.written) {
			p.st.written = p.last
		}
	}
	if r.diskGap != nil {
		r.closeGap(&r.diskGap, now)
	}
	r.mu.Unlock()
}

func (r *Recorder) sync(now time.Time) {
	if err := fdatasync(r.seg.f); err != nil {
		r.fail(now, fmt.Errorf("fdatasync: %w", err), &batch{})
		return
	}
	r.seg.dirty = false
	r.lastSync = now
	r.st.syncs++
	r.mu.Lock()
	for _, st := range r.ports {
		st.synced = st.written
	}
	r.mu.Unlock()
}

// fail drops the recorder to RAM-only after a disk error: b's frames are
// counted as not recorded, the segment is closed at its last whole block
// and a gap opens.
func (r *Recorder) fail(now time.Time, err error, b *batch) {
	r.st.writeErrors++
	r.lastRetry = now
	from := now
	if !b.min.IsZero() {
		from = b.min
	}
	r.mu.Lock()
	if !r.ramOnly {
		r.ramOnly = true
	}
	if r.diskGap == nil { // a retry that fails at its first write continues the gap
		r.ramSince = now
		r.diskGap = &Gap{Reason: GapDiskError, From: from, NotRecorded: map[string]uint64{}}
	}
	r.ramWhy = describeErr(err)
	r.diskGap.Detail = err.Error()
	for _, st := range r.ports {
		st.lastGap = r.diskGap
	}
	r.mu.Unlock()
	r.lose(b, GapDiskError)
	if r.seg != nil {
		r.closeSegment(now)
	}
	if errors.Is(err, syscall.ENOSPC) {
		r.makeRoom()
	}
}

// lose counts b's frames as not recorded, in the open disk gap; the
// caller holds wmu.
func (r *Recorder) lose(b *batch, reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, p := range b.ports {
		p.st.notRecorded += p.frames
		p.st.frames -= p.frames
		p.st.bytes -= p.bytes
		p.st.dropRun += p.frames
		p.st.dropReason = reason
		if r.diskGap != nil {
			r.diskGap.NotRecorded[p.st.name] += p.frames
		}
	}
}

// describeErr is the state's reason: the box's words for the common cases.
func describeErr(err error) string {
	switch {
	case errors.Is(err, syscall.ENOSPC):
		return "disk full: frames are kept in RAM only"
	case errors.Is(err, syscall.EROFS):
		return "file system read-only: frames are kept in RAM only"
	case errors.Is(err, syscall.EIO):
		return "disk I/O error: frames are kept in RAM only"
	}
	return "write failed: frames are kept in RAM only"
}

// retry tries the disk again after a failure; when the disk is still
// full it frees the oldest unpinned segment for the next try, as a ring
// makes room; the caller holds wmu.
func (r *Recorder) retry(now time.Time) {
	r.lastRetry = now
	r.st.retries++
	r.mu.Lock()
	header := append([]ifKey(nil), r.ifaces...)
	r.cur.ifaceBase = len(r.ifaces) // pending holds no interface blocks while RAM-only
	r.mu.Unlock()
	if free, err := freeBytes(r.opt.Dir); err == nil && free < int64(r.opt.MaxPendingBytes) {
		// Not room for one batch: do not start a segment only to fail it.
		r.makeRoom()
		return
	}
	if err := r.openSegment(now, header); err != nil {
		r.mu.Lock()
		r.ramWhy = describeErr(err)
		r.diskGap.Detail = err.Error()
		r.mu.Unlock()
		if errors.Is(err, syscall.ENOSPC) {
			r.makeRoom()
		}
		return
	}
	// Frames are encoded again; the gap closes at the first batch that
	// reaches the disk.
	r.mu.Lock()
	r.ramOnly, r.ramWhy = false, ""
	r.mu.Unlock()
}

// closeGap ends an open gap at now and journals it; the caller holds wmu
// and mu.
func (r *Recorder) closeGap(g **Gap, now time.Time) {
	t := now.UTC()
	(*g).To = &t
	saved := r.gaps.add((*g).clone()).clone()
	for _, st := range r.ports {
		if st.lastGap == *g {
			st.lastGap = &saved
		}
	}
	*g = nil
	_ = r.saveGaps() // a journal that cannot be written shows in the next write's error
}

func (r *Recorder) saveGaps() error {
	return writeJSON(filepath.Join(r.opt.Dir, gapsFile), r.gaps)
}

// closeSegment syncs the open segment, writes its index and adds it to
// the ring, then applies the quota; the caller holds wmu.
func (r *Recorder) closeSegment(now time.Time) {
	s := r.seg
	r.seg = nil
	synced := !s.dirty
	if s.dirty {
		if err := fdatasync(s.f); err == nil {
			synced = true
			r.st.syncs++
			r.mu.Lock()
			for _, st := range r.ports {
				st.synced = st.written
			}
			r.mu.Unlock()
		}
	}
	s.f.Close()
	if s.idx.Frames == 0 {
		// A header alone (a failed first write): nothing to keep.
		os.Remove(s.path)
		syncDir(r.opt.Dir)
		return
	}
	s.idx.Closed = now.UTC()
	s.idx.Bytes = s.size
	if !synced {
		// An index is trusted unread at the next boot, so it is never
		// more durable than the bytes it counts: this segment is scanned.
		r.st.writeErrors++
	} else if err := writeJSON(indexPath(r.opt.Dir, s.idx.Name), s.idx); err != nil {
		// Without its index the segment is scanned at the next boot.
		r.st.writeErrors++
	} else if st, err := os.Stat(indexPath(r.opt.Dir, s.idx.Name)); err == nil {
		r.idxBytes += st.Size()
	}
	r.closed = append(r.closed, s.idx)
	r.enforceQuota()
}

// Close writes and syncs everything pending, closes the segment with its
// index and releases the directory. Writes after Close are counted as
// not recorded. Stop the ports' consumers first: nothing they write
// after Close is kept.
func (r *Recorder) Close() error {
	r.flush(true)
	r.wmu.Lock()
	defer r.wmu.Unlock()
	now := r.opt.Now()
	if r.seg != nil {
		r.closeSegment(now)
	}
	r.mu.Lock()
	r.shut = true
	r.mu.Unlock()
	err := writeJSON(filepath.Join(r.opt.Dir, stateFile), runState{Running: false, At: now.UTC()})
	if r.lock != nil {
		r.lock.Close()
	}
	return err
}
