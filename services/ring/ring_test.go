package ring

import (
	"errors"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
)

func collect[T any](s Snapshot[T]) []T {
	var out []T
	s.Range(0, func(_ uint64, v T) bool { out = append(out, v); return true })
	return out
}

func TestEvictsByCount(t *testing.T) {
	r, err := New[int](Limits{Items: 3, Bytes: 1 << 20}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		r.Append(i)
	}
	got := collect(r.Snapshot())
	if len(got) != 3 || got[0] != 7 || got[2] != 9 {
		t.Errorf("contents = %v, want [7 8 9]", got)
	}
	st := r.Stats()
	if st.Evicted != 7 || st.Appended != 10 || st.Items != 3 {
		t.Errorf("stats = %+v", st)
	}
}

func TestEvictsByBytes(t *testing.T) {
	slot := int64(SlotBytes[string]())
	r, _ := New[string](Limits{Items: 100, Bytes: 2*slot + 10}, func(s string) int { return len(s) })
	for _, s := range []string{"aaaa", "bbbb", "cccc"} {
		r.Append(s)
	}
	got := collect(r.Snapshot())
	if len(got) != 2 || got[0] != "bbbb" {
		t.Errorf("contents = %v, want [bbbb cccc]", got)
	}
	st := r.Stats()
	if st.Bytes != 2*slot+8 || st.Evicted != 1 || st.EvictedBytes != uint64(slot)+4 {
		t.Errorf("stats = %+v, want 2 items of %d+4 bytes kept, one evicted", st, slot)
	}
}

func TestSlotBytesIsTheChunkShare(t *testing.T) {
	// A chunk of 256 ints and their int32 sizes is 3072 bytes; counted as
	// an object with pointers (8-byte header: the 3200 class) plus its
	// pointer in the chunk list, that is 12.53 bytes an item, rounded up.
	if got := SlotBytes[int](); got != 13 {
		t.Errorf("SlotBytes[int]() = %d, want 13", got)
	}
}

func TestResizeReaccountsAndEvicts(t *testing.T) {
	slot := int64(SlotBytes[int]())
	var evicted []int
	r, _ := NewFixed[int](Limits{Items: 10, Bytes: 3*slot + 100})
	r.OnEvict(func(v int) { evicted = append(evicted, v) })
	for i := range 3 {
		r.Append(i)
	}
	if !r.Resize(2, 60) {
		t.Fatal("Resize of a kept item reported it gone")
	}
	if st := r.Stats(); st.Bytes != 3*slot+60 || st.Evicted != 0 {
		t.Errorf("after growing item 2 by 60: %+v", st)
	}
	r.Resize(2, 100) // 3 slots + 100 still fit
	r.Resize(1, 1)   // now over: the oldest goes first
	if st := r.Stats(); st.Items != 2 || st.Bytes != 2*slot+101 || len(evicted) != 1 || evicted[0] != 0 {
		t.Errorf("after overflow: %+v, evicted %v; want item 0 evicted", st, evicted)
	}
	if r.Resize(0, 5) {
		t.Error("Resize of an evicted item reported it kept")
	}
}

func TestOversizeRefusedAndCounted(t *testing.T) {
	slot := int64(SlotBytes[string]())
	r, _ := New[string](Limits{Items: 100, Bytes: slot + 4}, func(s string) int { return len(s) })
	r.Append("ab")
	if _, err := r.Append("toolong"); !errors.Is(err, ErrOversize) {
		t.Fatalf("err = %v, want ErrOversize", err)
	}
	st := r.Stats()
	if st.Oversize != 1 || st.Items != 1 {
		t.Errorf("stats = %+v: the oversize item must be counted and must not evict", st)
	}
}

func TestRevisionBumpsOnEveryChange(t *testing.T) {
	r, _ := New[int](Limits{Items: 2, Bytes: 1 << 20}, nil)
	rev := r.Revision()
	for i := range 5 {
		r.Append(i)
		if now := r.Revision(); now <= rev {
			t.Fatalf("revision did not move after append %d", i)
		} else {
			rev = now
		}
	}
}

func TestSnapshotUnchangedByLaterAppends(t *testing.T) {
	r, _ := New[int](Limits{Items: chunkSize + 10, Bytes: 1 << 30}, nil)
	for i := range chunkSize * 2 {
		r.Append(i)
	}
	snap := r.Snapshot()
	before := collect(snap)
	// Push the whole snapshot out and beyond, across chunk boundaries.
	for i := range chunkSize * 4 {
		r.Append(-i)
	}
	after := collect(snap)
	if len(before) != len(after) {
		t.Fatalf("snapshot length changed: %d → %d", len(before), len(after))
	}
	for i := range before {
		if before[i] != after[i] {
			t.Fatalf("item %d changed: %d → %d", i, before[i], after[i])
		}
	}
	if v, ok := snap.Get(snap.FirstSeq()); !ok || v != before[0] {
		t.Errorf("Get(first) = %d,%v", v, ok)
	}
	if _, ok := snap.Get(snap.EndSeq()); ok {
		t.Error("Get(end) must be out of the view")
	}
}

func TestRangeFromAndReverse(t *testing.T) {
	r, _ := New[int](Limits{Items: 1000, Bytes: 1 << 20}, nil)
	for i := range 600 {
		r.Append(i)
	}
	s := r.Snapshot()
	var fwd []int
	s.Range(595, func(_ uint64, v int) bool { fwd = append(fwd, v); return true })
	if len(fwd) != 5 || fwd[0] != 595 {
		t.Errorf("Range(595) = %v", fwd)
	}
	var rev []int
	s.RangeReverse(s.EndSeq(), func(_ uint64, v int) bool { rev = append(rev, v); return len(rev) < 3 })
	if len(rev) != 3 || rev[0] != 599 || rev[2] != 597 {
		t.Errorf("RangeReverse = %v", rev)
	}
}

func TestEmptyAfterFullEviction(t *testing.T) {
	r, _ := New[string](Limits{Items: 10, Bytes: int64(SlotBytes[string]()) + 3}, func(s string) int { return len(s) })
	r.Append("abc")
	r.Append("xyz") // evicts "abc", ring holds one item mid-chunk
	if got := collect(r.Snapshot()); len(got) != 1 || got[0] != "xyz" {
		t.Errorf("contents = %v", got)
	}
}

func TestConcurrentReadersSeeConsistentViews(t *testing.T) {
	r, _ := New[int](Limits{Items: 500, Bytes: 1 << 30}, nil)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range 20000 {
			r.Append(i)
		}
	}()
	for range 200 {
		s := r.Snapshot()
		prev := -1
		s.Range(0, func(seq uint64, v int) bool {
			if int(seq) != v || (prev >= 0 && v != prev+1) {
				t.Errorf("inconsistent view: seq %d holds %d after %d", seq, v, prev)
				return false
			}
			prev = v
			return true
		})
	}
	wg.Wait()
}

func TestNewRejectsBadLimits(t *testing.T) {
	if _, err := New[int](Limits{Items: 0, Bytes: 1}, nil); err == nil {
		t.Error("zero item limit accepted")
	}
}

// TestSlotBytesMatchesTheHeap fills a ring and compares the heap's growth
// with what the ring accounts.
func TestSlotBytesMatchesTheHeap(t *testing.T) {
	const n = 100 * chunkSize
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	r, _ := NewFixed[[4]int64](Limits{Items: n, Bytes: 1 << 30})
	for i := range n {
		r.Append([4]int64{int64(i)})
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	heap := float64(after.HeapAlloc - before.HeapAlloc)
	acct := float64(r.Stats().Bytes)
	if acct < heap*0.95 || acct > heap*1.10 {
		t.Errorf("ring accounts %.0f bytes for %d items, the heap grew %.0f", acct, n, heap)
	}
	runtime.KeepAlive(r)
}

func TestPtrReadsInPlace(t *testing.T) {
	r, _ := New[[2]int](Limits{Items: 3, Bytes: 1 << 20}, nil)
	for i := range 5 {
		if next := r.Next(); next != uint64(i) {
			t.Fatalf("Next = %d before append %d", next, i)
		}
		r.Append([2]int{i, -i})
	}
	s := r.Snapshot()
	if p := s.Ptr(4); p == nil || p[0] != 4 {
		t.Errorf("Ptr(4) = %v", p)
	}
	if s.Ptr(1) != nil || s.Ptr(5) != nil {
		t.Error("Ptr outside the view must be nil")
	}
	var got []int
	s.RangePtr(0, func(_ uint64, v *[2]int) bool { got = append(got, v[0]); return true })
	if len(got) != 3 || got[0] != 2 {
		t.Errorf("RangePtr = %v, want [2 3 4]", got)
	}
}

func TestFullRingNobodyReadsReusesChunks(t *testing.T) {
	r, _ := NewFixed[[4]int](Limits{Items: 64 * chunkSize, Bytes: 1 << 30})
	r.ReuseChunks()
	for i := range 65 * chunkSize {
		r.Append([4]int{i})
	}
	const chunks = 200
	n := testing.AllocsPerRun(1, func() {
		for i := range chunks * chunkSize {
			r.Append([4]int{i})
		}
	})
	// Only the chunk list, sliced from the front, is reallocated now and
	// then; a new chunk per chunkSize appends would be 200.
	if n > chunks/10 {
		t.Errorf("%v allocations in %d chunks' appends, want at most %d: evicted chunks are reused", n, chunks, chunks/10)
	}
}

func TestSnapshotKeepsItsChunksFromReuse(t *testing.T) {
	r, _ := NewFixed[int](Limits{Items: chunkSize, Bytes: 1 << 30})
	r.ReuseChunks()
	for i := range chunkSize {
		r.Append(i)
	}
	view := r.Snapshot()
	// Two chunks' worth more: the viewed chunk is evicted, and a reused
	// one would be overwritten.
	for i := range 2 * chunkSize {
		r.Append(chunkSize + i)
	}
	for seq := range uint64(chunkSize) {
		if v, ok := view.Get(seq); !ok || v != int(seq) {
			t.Fatalf("view.Get(%d) = %d, %v; want %d, true", seq, v, ok, seq)
		}
	}
	got := collect(r.Snapshot())
	if len(got) != chunkSize || got[0] != 2*chunkSize || got[chunkSize-1] != 3*chunkSize-1 {
		t.Errorf("ring holds %d items %d..%d, want %d..%d", len(got), got[0], got[len(got)-1], 2*chunkSize, 3*chunkSize-1)
	}
}

func TestAppendEachWritesInPlaceAndEvicts(t *testing.T) {
	r, _ := NewFixed[[2]int](Limits{Items: 3, Bytes: 1 << 20})
	r.Append([2]int{-1, -1})
	r.AppendEach(3, func(i int, v *[2]int) {
		if *v != [2]int{} {
			t.Errorf("slot %d holds %v, want the zero value", i, *v)
		}
		v[0], v[1] = i, 10*i
	})
	got := collect(r.Snapshot())
	if want := [][2]int{{0, 0}, {1, 10}, {2, 20}}; !slices.Equal(got, want) {
		t.Errorf("contents %v, want %v", got, want)
	}
	if st := r.Stats(); st.Appended != 4 || st.Evicted != 1 || st.Bytes != 3*int64(SlotBytes[[2]int]()) {
		t.Errorf("stats %+v", st)
	}
}

// TestRunsMatchItemByItem checks the uniform ring's batch path (placeRun,
// evictRun) against the item-by-item path on the same operations: the
// same contents, counters and revisions, as many chunks allocated, and
// no snapshot changed by a chunk the batch path reused.
func TestRunsMatchItemByItem(t *testing.T) {
	slot := int64(SlotBytes[int]())
	for _, l := range []Limits{
		{Items: 1, Bytes: 1 << 30}, {Items: 3, Bytes: 1 << 30}, {Items: 255, Bytes: 1 << 30},
		{Items: 256, Bytes: 1 << 30}, {Items: 257, Bytes: 1 << 30}, {Items: 1000, Bytes: 1 << 30},
		{Items: 1 << 20, Bytes: 700*slot + slot/2}, {Items: 600, Bytes: 512 * slot},
	} {
		fast, _ := NewFixed[int](l)
		slow, _ := NewFixed[int](l)
		fast.ReuseChunks()
		slow.ReuseChunks()
		slow.uniform = false
		type view struct {
			s    Snapshot[int]
			want []int
		}
		var views []view
		fastChunks, slowChunks := map[*chunk[int]]bool{}, map[*chunk[int]]bool{}
		rnd := uint64(l.Items)*7919 + uint64(l.Bytes)
		next := func(n uint64) int { rnd = rnd*6364136223846793005 + 1442695040888963407; return int(rnd >> 33 % n) }
		v := 0
		for op := range 400 {
			switch next(4) {
			case 0:
				batch := make([]int, next(700))
				for i := range batch {
					batch[i] = v
					v++
				}
				fast.AppendAll(batch)
				slow.AppendAll(batch)
			case 1:
				n, base := next(600), v
				fill := func(i int, p *int) { *p = base + i }
				fast.AppendEach(n, fill)
				slow.AppendEach(n, fill)
				v += n
			case 2:
				fast.Append(v)
				slow.Append(v)
				v++
			case 3:
				s := fast.Snapshot()
				slow.Snapshot()
				if next(4) == 0 {
					views = append(views, view{s, collect(s)})
				}
			}
			if f, s := fast.Stats(), slow.Stats(); f != s {
				t.Fatalf("limits %+v op %d: stats %+v, item by item %+v", l, op, f, s)
			}
			for _, c := range fast.chunks {
				fastChunks[c] = true
			}
			for _, c := range slow.chunks {
				slowChunks[c] = true
			}
			if len(fastChunks) != len(slowChunks) || (fast.spare == nil) != (slow.spare == nil) {
				t.Fatalf("limits %+v op %d: %d chunks allocated (spare %v), item by item %d (spare %v)",
					l, op, len(fastChunks), fast.spare != nil, len(slowChunks), slow.spare != nil)
			}
		}
		if f, s := collect(fast.Snapshot()), collect(slow.Snapshot()); !slices.Equal(f, s) {
			t.Errorf("limits %+v: contents differ (%d and %d items)", l, len(f), len(s))
		}
		for i, w := range views {
			if got := collect(w.s); !slices.Equal(got, w.want) {
				t.Errorf("limits %+v: snapshot %d changed after later appends", l, i)
			}
		}
	}
}

// TestAppendSeqAsAppend: AppendSeq makes each item with the sequence
// number it then gets, weighs it with the size function and evicts as
// Append does; an item refused as oversize takes no number.
func TestAppendSeqAsAppend(t *testing.T) {
	type item struct {
		seq uint64
		s   string
	}
	slot := int64(SlotBytes[item]())
	size := func(v item) int { return len(v.s) }
	a, _ := New[item](Limits{Items: 100, Bytes: 2*slot + 10}, size)
	b, _ := New[item](Limits{Items: 100, Bytes: 2*slot + 10}, size)
	for _, s := range []string{"aaaa", "bbbb", strings.Repeat("x", 60), "cccc"} {
		wantSeq, wantErr := a.Append(item{a.Next(), s})
		gotSeq, gotErr := b.AppendSeq(func(seq uint64) item { return item{seq, s} })
		if gotSeq != wantSeq || !errors.Is(gotErr, wantErr) {
			t.Errorf("%q: AppendSeq gave %d, %v; Append %d, %v", s, gotSeq, gotErr, wantSeq, wantErr)
		}
	}
	got, want := collect(b.Snapshot()), collect(a.Snapshot())
	if !slices.Equal(got, want) || len(got) != 2 || got[1].seq != 2 {
		t.Errorf("AppendSeq kept %v, Append %v; want the last two, numbered 1 and 2", got, want)
	}
	if sa, sb := a.Stats(), b.Stats(); sa.Bytes != sb.Bytes || sa.Evicted != sb.Evicted || sa.Oversize != sb.Oversize || sb.Oversize != 1 {
		t.Errorf("stats after AppendSeq %+v, after Append %+v", sb, sa)
	}
}
