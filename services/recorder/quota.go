package recorder

import (
	"os"
	"path/filepath"
	"slices"
)

// usedBytes is what the ring holds on disk: closed segments, their
// indexes and the open segment; the caller holds wmu.
func (r *Recorder) usedBytes() int64 {
	n := r.idxBytes
	for _, s := range r.closed {
		n += s.Bytes
	}
	if r.seg != nil {
		n += r.seg.size
	}
	return n
}

// enforceQuota deletes the oldest unpinned closed segments until the
// ring fits the quota; what pins keep past it is reported; the caller
// holds wmu.
func (r *Recorder) enforceQuota() {
	for r.usedBytes() > r.opt.QuotaBytes {
		if !r.deleteOldest() {
			r.st.quotaOver = r.usedBytes() - r.opt.QuotaBytes
			return
		}
	}
	r.st.quotaOver = 0
}

// deleteOldest removes the oldest closed segment no pin covers and
// reports whether there was one; the caller holds wmu.
func (r *Recorder) deleteOldest() bool {
	i := slices.IndexFunc(r.closed, func(x *Index) bool { return !r.pinned(x) })
	if i < 0 {
		return false
	}
	x := r.closed[i]
	ip := indexPath(r.opt.Dir, x.Name)
	if st, err := os.Stat(ip); err == nil {
		r.idxBytes -= st.Size()
	}
	// The segment goes before its index: a crash between the two leaves
	// an orphan index, which the next Open removes.
	os.Remove(filepath.Join(r.opt.Dir, x.Name))
	os.Remove(ip)
	r.closed = slices.Delete(r.closed, i, i+1)
	r.st.deleted++
	return true
}

// makeRoom frees the oldest unpinned segment on a full disk, as a ring
// makes room, but never the newest: it holds what was seen last before
// the disk filled; the caller holds wmu.
func (r *Recorder) makeRoom() {
	if len(r.closed) > 1 {
		newest := r.closed[len(r.closed)-1]
		r.closed = r.closed[:len(r.closed)-1]
		r.deleteOldest()
		r.closed = append(r.closed, newest)
	}
}
