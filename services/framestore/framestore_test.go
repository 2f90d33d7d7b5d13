package framestore

import (
	"bytes"
	"fmt"
	"runtime"
	"slices"
	"testing"
	"time"

	"fieldtap/drivers/wire"
)

func TestAppendCopiesBorrowedBytes(t *testing.T) {
	s, err := New(Limits{Items: 10, Bytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	buf := []byte("first frame")
	seq, _ := s.Append(Record{Time: time.Unix(1, 0), Link: wire.LinkEthernet, Data: buf, OrigLen: len(buf)})
	copy(buf, "XXXXX")
	got, _ := s.Snapshot().Get(seq)
	if string(got.Data) != "first frame" {
		t.Errorf("stored %q after the caller reused its buffer; the store must copy", got.Data)
	}
	s.Append(Record{Data: []byte("second")})
	if got, _ := s.Snapshot().Get(seq); string(got.Data) != "first frame" {
		t.Errorf("the next frame overwrote the first: %q", got.Data)
	}
}

// TestAppendAllIsAppendInOrder stores one batch with AppendAll and the
// same frames one by one with Append: the contents, the accounting and
// the oversize refusal must be the same either way.
func TestAppendAllIsAppendInOrder(t *testing.T) {
	l := Limits{Items: 3, Bytes: 16 << 10}
	one, _ := New(l)
	all, _ := New(l)
	buf := make([]byte, 20000)
	var recs []Record
	var borrowed [][]byte
	for i, size := range []int{60, 20000, 214, slabSize/4 + 1, 700, 90} {
		copy(buf, fmt.Sprintf("frame %d", i))
		one.Append(Record{Time: time.Unix(int64(i), 0), Data: buf[:size], OrigLen: size})
		borrowed = append(borrowed, slices.Clone(buf[:size]))
		recs = append(recs, Record{Time: time.Unix(int64(i), 0), Data: borrowed[i], OrigLen: size})
	}
	all.AppendAll(recs)
	for _, b := range borrowed {
		copy(b, "XXXXXXXX") // the caller reuses its buffers
	}
	if o, a := one.Stats(), all.Stats(); o != a {
		t.Errorf("AppendAll stats %+v, Append %+v", a, o)
	}
	so, sa := one.Snapshot(), all.Snapshot()
	for seq := so.FirstSeq(); seq < so.EndSeq(); seq++ {
		o, _ := so.Get(seq)
		a, _ := sa.Get(seq)
		if !o.Time.Equal(a.Time) || !bytes.Equal(o.Data, a.Data) || o.OrigLen != a.OrigLen {
			t.Errorf("seq %d: AppendAll kept %v %q, Append %v %q", seq, a.Time, a.Data[:8], o.Time, o.Data[:8])
		}
	}
}

func TestLargeFrameGetsItsOwnAllocation(t *testing.T) {
	s, _ := New(Limits{Items: 10, Bytes: 1 << 20})
	big := make([]byte, slabSize)
	seq, err := s.Append(Record{Data: big})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Snapshot().Get(seq); len(got.Data) != slabSize {
		t.Errorf("stored %d bytes, want %d", len(got.Data), slabSize)
	}
}

// TestAccountedBytesMatchTheHeap fills a store with frames of a SPAN
// port's typical sizes and compares what it accounts with the heap's
// growth: the bound is meant in real memory.
func TestAccountedBytesMatchTheHeap(t *testing.T) {
	const n = 50_000
	frame := make([]byte, 1514)
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	s, _ := New(Limits{Items: n, Bytes: 1 << 30})
	for i := range n {
		size := []int{60, 214, 700, 1514}[i%4]
		s.Append(Record{Time: time.Unix(int64(i), 0), Link: wire.LinkEthernet, Data: frame[:size], OrigLen: size})
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	heap := float64(after.HeapAlloc - before.HeapAlloc)
	acct := float64(s.Stats().Bytes)
	if acct < heap*0.95 || acct > heap*1.10 {
		t.Errorf("store accounts %.0f bytes for %d frames, the heap grew %.0f (%.1f%%)", acct, n, heap, 100*acct/heap)
	}
	runtime.KeepAlive(s)
}

func BenchmarkAppend(b *testing.B) {
	s, _ := New(Limits{Items: 100_000, Bytes: 64 << 20})
	frame := make([]byte, 214)
	t0 := time.Unix(1, 0)
	b.ReportAllocs()
	b.SetBytes(int64(len(frame)))
	for b.Loop() {
		s.Append(Record{Time: t0, Link: wire.LinkEthernet, Data: frame, OrigLen: len(frame)})
	}
}

// TestSnapshotFramesKeepTheirBytes: a store that reuses its evicted
// slabs never rewrites a frame a snapshot holds, through Append and
// AppendAll, however many times the ring turns over after it.
func TestSnapshotFramesKeepTheirBytes(t *testing.T) {
	s, err := New(Limits{Items: 500, Bytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	frame := func(i int) []byte { return fmt.Appendf(nil, "frame %07d %s", i, bytes.Repeat([]byte{byte(i)}, 200)) }
	n := 0
	for ; n < 800; n++ {
		s.Append(Record{Data: frame(n)})
	}
	snap := s.Snapshot()
	for ; n < 20000; n += 64 {
		recs := make([]Record, 64)
		for j := range recs {
			recs[j].Data = frame(n + j)
		}
		s.AppendAll(recs)
	}
	i := int(snap.FirstSeq())
	snap.Range(0, func(_ uint64, r Record) bool {
		if !bytes.Equal(r.Data, frame(i)) {
			t.Fatalf("snapshot frame %d now reads %.20q", i, r.Data)
		}
		i++
		return true
	})
	i = int(s.Snapshot().FirstSeq())
	s.Snapshot().Range(0, func(_ uint64, r Record) bool {
		if !bytes.Equal(r.Data, frame(i)) {
			t.Fatalf("frame %d reads %.20q", i, r.Data)
		}
		i++
		return true
	})
}
