package ring

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"time"
	"unsafe"

	"fieldtap/services/heapsize"
)

// chunkSize is how many items share one allocation. An evicted item's
// memory is released with its chunk, so at most chunkSize-1 evicted items
// are retained beyond the limits; 256 keeps that small and the chunk list
// short.
const chunkSize = 256

// Limits bound a ring. Both must be positive.
type Limits struct {
	Items int   // most items kept
	Bytes int64 // most heap bytes kept: each item's slot plus what its size function reports
}

// Stats describes a ring at one revision.
type Stats struct {
	Items        int
	Bytes        int64
	Limits       Limits
	Evicted      uint64 // items pushed out by the limits
	EvictedBytes uint64 // their bytes
	Oversize     uint64 // items refused because alone they exceed Limits.Bytes
	Appended     uint64 // items ever accepted
	Revision     uint64
	// Oldest is the time of the oldest kept item and EvictedTo that of
	// the newest evicted one, by the ring's TimeOf; zero without TimeOf,
	// with nothing kept, or with nothing evicted. An answer over the ring
	// is whole for a window that starts after EvictedTo.
	Oldest    time.Time
	EvictedTo time.Time
}

type chunk[T any] struct {
	items [chunkSize]T
	sizes [chunkSize]int32
	// times holds each item's time (UnixNano, noTime for the zero time)
	// in a ring that keeps them (KeepTimes); nil otherwise.
	times *[chunkSize]int64
}

// noTime stands for the zero time in a chunk's times.
const noTime = math.MinInt64

// nanoFloor and nanoCeil bound the times a chunk's times hold (UnixNano's
// range, 1677 to 2262).
var nanoFloor, nanoCeil = time.Unix(0, noTime+1), time.Unix(0, math.MaxInt64)

// SlotBytes is what the ring itself spends on each item of type T: its
// place in a chunk (the value and its recorded size) and its share of the
// chunk list. Every item is accounted at least this much.
func SlotBytes[T any]() int {
	var c chunk[T]
	perChunk := heapsize.Pointers(int(unsafe.Sizeof(c))) + int(unsafe.Sizeof(&c))
	return (perChunk + chunkSize - 1) / chunkSize
}

// Ring is a bounded append-only store. The zero value is not usable; call New.
type Ring[T any] struct {
	mu     sync.Mutex
	limits Limits
	size   func(T) int
	fixed  bool // size is Fixed: skip the call
	slot   int
	// uniform is set while every kept item weighs slot (a ring of
	// NewFixed that Resize never touched): the limits then come down to
	// a count, capacity, and a batch is placed and evicted a chunk's run
	// at a time instead of an item at a time (issue #14).
	uniform  bool
	capacity int
	onEvict  func(T)
	timeOf   func(*T) time.Time
	keepTime bool // KeepTimes: chunks hold their items' times
	// timesTo is the first seq whose time was not kept: MaxUint64 while
	// KeepTimes keeps them, 0 in a ring that never did.
	timesTo uint64

	chunks []*chunk[T] // chunks[0] holds seq first
	first  uint64      // seq of the oldest kept item
	next   uint64      // seq the next append gets
	bytes  int64
	// With reuse (ReuseChunks), spare is an evicted chunk no snapshot can
	// read, for the next append that needs one. sharedTo is next at the
	// latest Snapshot: a chunk holding seqs below it may be in a view.
	reuse    bool
	spare    *chunk[T]
	sharedTo uint64

	evicted, evictedBytes, oversize uint64
	rev                             uint64
	evictedTo                       time.Time
	evictedNs                       int64 // evictedTo as a chunk's times hold it, with KeepTimes
}

// ErrOversize is returned by Append for an item larger than Limits.Bytes.
var ErrOversize = errors.New("ring: item larger than the byte limit")

// New returns an empty ring bounded by l. size reports the heap bytes an
// item holds beyond its slot (the payload a slice or string points at,
// rounded as heapsize rounds it), and the ring adds the slot itself,
// SlotBytes[T](). A nil size makes a ring bounded by count alone: every
// item weighs one byte.
//
// Real memory stays within the limits plus one chunk: an evicted item's
// slot, and what it points at, are released with its chunk of chunkSize
// items, since a snapshot may still read them. With ReuseChunks it is two:
// a reused chunk holds evicted items until they are overwritten.
func New[T any](l Limits, size func(T) int) (*Ring[T], error) {
	if l.Items < 1 || l.Bytes < 1 {
		return nil, fmt.Errorf("ring: limits %d items, %d bytes: both must be positive", l.Items, l.Bytes)
	}
	r := &Ring[T]{limits: l, size: size, slot: SlotBytes[T]()}
	if size == nil {
		r.size, r.slot = func(T) int { return 1 }, 0
	}
	return r, nil
}

// NewFixed returns an empty ring of items that hold nothing outside their
// slot (no slice or string payload of their own): each costs
// SlotBytes[T]().
func NewFixed[T any](l Limits) (*Ring[T], error) {
	r, err := New(l, func(T) int { return 0 })
	if err != nil {
		return nil, err
	}
	r.fixed = true
	// Every item weighs slot, so the byte bound is a count too; a slot
	// over the bound leaves every item oversize, for the general path.
	r.capacity = int(min(int64(l.Items), l.Bytes/int64(r.slot)))
	r.uniform = r.capacity > 0
	return r, nil
}

// OnEvict sets a function called with each item the limits push out, in
// the goroutine that appended or resized, under the ring's lock: it must
// not call back into the ring. Set it before the first Append.
func (r *Ring[T]) OnEvict(fn func(T)) { r.onEvict = fn }

// TimeOf sets the function that tells an item's time, so Stats can say
// which times the ring still holds whole (Oldest, EvictedTo). It is
// called under the ring's lock, once per eviction run and once per
// Stats. Set it before the first Append.
func (r *Ring[T]) TimeOf(fn func(*T) time.Time) { r.timeOf = fn }

// KeepTimes makes the ring keep each item's time (by TimeOf) beside it,
// KeptTimeBytes an item more in its weight, read when the item is evicted
// instead of the item itself: a ring of large items evicted long after
// they were written would otherwise wait on memory for each (the SIP
// message ring: 7 % of a signalling frame's cost, issue #39). Only for a
// ring whose items are weighed (New with a size function), and set after
// TimeOf, before the first Append.
func (r *Ring[T]) KeepTimes() {
	if r.fixed || r.timeOf == nil {
		panic("ring: KeepTimes needs TimeOf and a ring whose items are weighed")
	}
	r.keepTime, r.evictedNs, r.timesTo = true, noTime, math.MaxUint64
	r.slot += KeptTimeBytes
}

// KeptTimeBytes is what KeepTimes adds to each item's weight.
const KeptTimeBytes = 8

// stamp records the time of the item just placed at seq; the caller
// holds mu. A time outside nanoseconds' range (a capture's bad clock)
// ends the keeping: evicted items are read from then on, as without
// KeepTimes, so EvictedTo is never short of an evicted item's time.
func (r *Ring[T]) stamp(seq uint64, p *T) {
	c := r.chunks[len(r.chunks)-1]
	if c.times == nil {
		c.times = new([chunkSize]int64)
	}
	ns := int64(noTime)
	if t := r.timeOf(p); !t.IsZero() {
		if t.Before(nanoFloor) || t.After(nanoCeil) {
			r.keepTime, r.timesTo = false, seq
			return
		}
		ns = t.UnixNano()
	}
	c.times[seq%chunkSize] = ns
}

// evictedAt records that the item at p was evicted; the newest such
// time is EvictedTo.
func (r *Ring[T]) evictedAt(p *T) {
	if r.timeOf == nil {
		return
	}
	if t := r.timeOf(p); t.After(r.evictedTo) {
		r.evictedTo = t
	}
}

// ReuseChunks makes the ring keep an evicted chunk that no snapshot ever
// held for its next chunk instead of leaving it to the collector: a full
// ring that no one reads while it fills then allocates nothing. Set it
// before the first Append.
func (r *Ring[T]) ReuseChunks() { r.reuse = true }

// Append stores v, evicting the oldest items as the limits require, and
// returns v's sequence number. Sequence numbers start at 0 and never repeat.
func (r *Ring[T]) Append(v T) (uint64, error) {
	n := r.slot
	if !r.fixed {
		n += r.size(v)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.appendLocked(&v, n)
}

// AppendSeq is Append for an item that holds its own sequence number:
// v makes it, under the ring's lock, given the number it will get (if it
// is not refused), so the caller asks Next for it under a lock of its
// own no more.
func (r *Ring[T]) AppendSeq(v func(seq uint64) T) (uint64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	it := v(r.next)
	n := r.slot
	if !r.fixed {
		n += r.size(it)
	}
	return r.appendLocked(&it, n)
}

// AppendAll stores every item of vs, in order, under one lock; items too
// large alone are refused and counted as Append refuses them.
func (r *Ring[T]) AppendAll(vs []T) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.uniform && r.onEvict == nil {
		for len(vs) > 0 {
			vs = vs[copy(r.placeRun(len(vs)), vs):]
		}
		return
	}
	for i := range vs {
		v := &vs[i]
		n := r.slot
		if !r.fixed {
			n += r.size(*v)
		}
		r.appendLocked(v, n)
	}
}

// AppendEach stores n items, in order, under one lock: fill writes item
// i in its slot, which holds the zero T, instead of through a copy. Only
// for a ring of NewFixed, whose items weigh their slot whatever they hold.
func (r *Ring[T]) AppendEach(n int, fill func(i int, v *T)) {
	if !r.fixed {
		panic("ring: AppendEach on a ring whose items are weighed")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.uniform && r.onEvict == nil {
		for i := 0; i < n; {
			run := r.placeRun(n - i)
			clear(run) // a reused chunk's slots hold evicted items
			for j := range run {
				fill(i+j, &run[j])
			}
			i += len(run)
		}
		return
	}
	var zero T
	for i := range n {
		if v, _, err := r.place(r.slot); err == nil {
			*v = zero // a reused chunk's slot holds an evicted item
			fill(i, v)
		}
	}
}

// appendLocked stores *v of weight n; the caller holds mu. By pointer:
// an item passed by value is copied twice more, once an item.
func (r *Ring[T]) appendLocked(v *T, n int) (uint64, error) {
	p, seq, err := r.place(n)
	if err != nil {
		return 0, err
	}
	*p = *v
	if r.keepTime {
		r.stamp(seq, p)
	}
	return seq, nil
}

// place makes room for an item of weight n, evicting as the limits
// require, and returns its slot and sequence number; the caller holds mu
// and writes the slot before unlocking.
func (r *Ring[T]) place(n int) (*T, uint64, error) {
	if int64(n) > r.limits.Bytes {
		r.oversize++
		r.rev++
		return nil, 0, ErrOversize
	}
	for r.next-r.first >= uint64(r.limits.Items) || r.bytes+int64(n) > r.limits.Bytes {
		r.evictOldest()
	}
	off := r.next % chunkSize
	if off == 0 {
		c := r.spare
		if c == nil {
			c = new(chunk[T])
		}
		r.spare = nil
		r.chunks = append(r.chunks, c)
	}
	c := r.chunks[len(r.chunks)-1]
	c.sizes[off] = int32(n)
	r.bytes += int64(n)
	seq := r.next
	r.next++
	r.rev++
	return &c.items[off], seq, nil
}

// placeRun is place for up to n items of a uniform ring: it makes room
// for as many as fit in the current chunk (and the capacity), evicting
// the oldest, and returns their slots for the caller to write before it
// unlocks. It leaves the ring as placing each item after its own
// eviction does: the run never reaches items it places, and a new chunk
// is taken after the first item's eviction and before the rest's, so the
// chunk each eviction empties is kept for reuse or released as then.
func (r *Ring[T]) placeRun(n int) []T {
	off := int(r.next % chunkSize)
	m := min(n, r.capacity, chunkSize-off)
	over := int(r.next-r.first) + m - r.capacity
	if off == 0 {
		if r.next-r.first == uint64(r.capacity) {
			r.evictRun(1)
			over--
		}
		c := r.spare
		if c == nil {
			c = new(chunk[T])
		}
		r.spare = nil
		r.chunks = append(r.chunks, c)
	}
	if over > 0 {
		r.evictRun(over)
	}
	c := r.chunks[len(r.chunks)-1]
	for i := off; i < off+m; i++ {
		c.sizes[i] = int32(r.slot)
	}
	r.bytes += int64(m * r.slot)
	r.next += uint64(m)
	r.rev += uint64(m)
	return c.items[off : off+m]
}

// evictRun drops the n oldest items of a uniform ring, a chunk's run at
// a time, as n calls of evictOldest do; the caller holds mu and knows the
// ring holds n.
func (r *Ring[T]) evictRun(n int) {
	for n > 0 {
		e := min(n, chunkSize-int(r.first%chunkSize))
		r.evictedAt(&r.chunks[0].items[int(r.first%chunkSize)+e-1])
		r.bytes -= int64(e * r.slot)
		r.evicted += uint64(e)
		r.evictedBytes += uint64(e * r.slot)
		r.first += uint64(e)
		n -= e
		if r.first%chunkSize == 0 {
			c := r.chunks[0]
			r.chunks = r.chunks[1:]
			if r.reuse && r.sharedTo <= r.first-chunkSize {
				r.spare = c
			}
		}
	}
}

// evictOldest drops the oldest item; the caller holds mu and knows the ring
// is not empty.
func (r *Ring[T]) evictOldest() {
	c := r.chunks[0]
	off := r.first % chunkSize
	n := int64(c.sizes[off])
	r.bytes -= n
	r.evicted++
	r.evictedBytes += uint64(n)
	r.first++
	if r.keepTime {
		if ns := c.times[off]; ns > r.evictedNs {
			r.evictedNs, r.evictedTo = ns, time.Unix(0, ns).UTC()
		}
	} else {
		r.evictedAt(&c.items[off])
	}
	if r.onEvict != nil {
		r.onEvict(c.items[off])
	}
	if r.first%chunkSize == 0 {
		// The chunk is done. One a snapshot may still read (through the
		// shared backing array, which the next growing append reallocates
		// without it) is left to the collector; one no view ever held may
		// be kept for reuse. Its items are overwritten as it refills, not
		// cleared first: New's bound allows for the evicted items they
		// hold until then.
		r.chunks = r.chunks[1:]
		if r.reuse && r.sharedTo <= r.first-chunkSize {
			r.spare = c
		}
	}
}

// Resize changes the accounted weight of a kept item whose heap share grew
// or shrank after it was appended (a SIP dialog gaining messages): size is
// what the size function would report now. The oldest items, this one
// included, are evicted until the limits hold again. It reports whether
// seq was still kept.
func (r *Ring[T]) Resize(seq uint64, size int) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if seq < r.first || seq >= r.next {
		return false
	}
	c := r.chunks[seq/chunkSize-r.first/chunkSize]
	off := seq % chunkSize
	n := int32(r.slot + size)
	r.bytes += int64(n - c.sizes[off])
	c.sizes[off] = n
	if n != int32(r.slot) {
		r.uniform = false
	}
	for r.bytes > r.limits.Bytes && r.next > r.first {
		r.evictOldest()
	}
	r.rev++
	return true
}

// Snapshot returns a consistent view of the ring's current contents.
func (r *Ring[T]) Snapshot() Snapshot[T] {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sharedTo = r.next
	return Snapshot[T]{chunks: r.chunks, first: r.first, end: r.next, rev: r.rev, timesTo: r.timesTo}
}

// Stats returns the ring's counters.
func (r *Ring[T]) Stats() Stats {
	r.mu.Lock()
	defer r.mu.Unlock()
	var oldest time.Time
	if r.timeOf != nil && r.next > r.first {
		oldest = r.timeOf(&r.chunks[0].items[r.first%chunkSize])
	}
	return Stats{
		Oldest:       oldest,
		EvictedTo:    r.evictedTo,
		Items:        int(r.next - r.first),
		Bytes:        r.bytes,
		Limits:       r.limits,
		Evicted:      r.evicted,
		EvictedBytes: r.evictedBytes,
		Oversize:     r.oversize,
		Appended:     r.next,
		Revision:     r.rev,
	}
}

// Released reports whether every item with a sequence number in
// [from, to) is evicted, and whether a snapshot ever could show one of
// them: evicted and never shown, what they pointed at is the caller's
// again (Slabs).
func (r *Ring[T]) Released(from, to uint64) (evicted, shown bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.first >= to, r.sharedTo > from
}

// Next is the sequence number the next Append will return.
func (r *Ring[T]) Next() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.next
}

// Revision returns a number that changes on every Append, so a reader can
// tell cheaply whether anything happened since it last looked.
func (r *Ring[T]) Revision() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.rev
}
