package ring

import (
	"bytes"
	"fmt"
	"testing"
)

// slabbed is a ring of byte items copied into Slabs, as framestore and
// sip keep them.
type slabbed struct {
	r *Ring[[]byte]
	s *Slabs
}

func newSlabbed(t *testing.T, items int) *slabbed {
	t.Helper()
	r, err := New(Limits{Items: items, Bytes: 1 << 30}, func(b []byte) int { return len(b) })
	if err != nil {
		t.Fatal(err)
	}
	r.ReuseChunks()
	return &slabbed{r: r, s: NewSlabs(r, 1024)}
}

// add appends items in one batch, as framestore.AppendAll does.
func (sb *slabbed) add(items ...[]byte) {
	for i := range items {
		items[i] = sb.s.Copy(items[i])
	}
	sb.r.AppendAll(items)
	sb.s.Seal()
}

func item(i int) []byte {
	return []byte(fmt.Sprintf("item %06d %s", i, bytes.Repeat([]byte{byte('a' + i%26)}, 40)))
}

// TestSlabsReusedWhileNobodyReads: a full ring that no snapshot reads
// fills the slabs it evicted; the bytes it holds stay its items'.
func TestSlabsReusedWhileNobodyReads(t *testing.T) {
	sb := newSlabbed(t, 100)
	seen := map[*byte]bool{}
	for i := range 5000 {
		sb.add(item(i))
		seen[&sb.s.base[0]] = true
	}
	// 100 items of ~57 bytes span about six 1 KiB slabs at once, plus
	// the one filling and those waiting for their last item's eviction.
	if len(seen) > 12 {
		t.Errorf("%d slabs for 5000 items through a 100-item ring: evicted slabs are not reused", len(seen))
	}
	i := 4900
	sb.r.Snapshot().Range(0, func(_ uint64, b []byte) bool {
		if !bytes.Equal(b, item(i)) {
			t.Fatalf("item %d reads %q", i, b)
		}
		i++
		return true
	})
}

// TestSlabsNeverRewriteWhatASnapshotCanShow: the items a snapshot holds
// keep their bytes however far the ring moves on, batches spanning
// several slabs included; slabs written after the snapshot are reused
// again once evicted.
func TestSlabsNeverRewriteWhatASnapshotCanShow(t *testing.T) {
	sb := newSlabbed(t, 100)
	n := 0
	for ; n < 150; n++ {
		sb.add(item(n))
	}
	snap := sb.r.Snapshot()
	first := snap.FirstSeq()
	for ; n < 3000; n += 40 {
		batch := make([][]byte, 40) // ~2.2 KiB: each batch fills two or three slabs
		for j := range batch {
			batch[j] = item(n + j)
		}
		sb.add(batch...)
	}
	i := int(first)
	snap.Range(0, func(_ uint64, b []byte) bool {
		if !bytes.Equal(b, item(i)) {
			t.Fatalf("the snapshot's item %d now reads %q", i, b)
		}
		i++
		return true
	})
	if i != 150 {
		t.Fatalf("the snapshot showed items up to %d, want 149", i-1)
	}
	seen := map[*byte]bool{}
	for ; n < 6000; n++ {
		sb.add(item(n))
		seen[&sb.s.base[0]] = true
	}
	if len(seen) > 12 {
		t.Errorf("%d slabs after the snapshot's items were evicted: reuse did not resume", len(seen))
	}
}
