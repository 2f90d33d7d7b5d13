package rtp

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestRingTableWeighed: a weighed table (the dialogs') keeps, charges
// and evicts what a plain model does: the oldest go while the table is
// full by count or past its bytes (each entry its weight, plus the ring's
// and index's arrays), on additions and on growth, the grown entry too
// when it is the oldest, an entry alone past the bytes kept; every kept
// entry is found and no evicted one, and each knows whether it is kept.
func TestRingTableWeighed(t *testing.T) {
	for _, limit := range []int{1, 7, 100, 500} {
		r := rand.New(rand.NewPCG(3, uint64(limit)))
		maxBytes := int64(limit) * 900
		tab := newDialogTable(limit, maxBytes)
		var model, gone []*dialogMedia
		evicted := uint64(0)
		arrays := func() int64 { return tab.ringBytes(len(tab.ring)) + indexBytes(len(tab.index)) }
		charged := func() int64 {
			n := arrays()
			for _, d := range model {
				n += d.bytes()
			}
			return n
		}
		trim := func() {
			for charged() > maxBytes && len(model) > 1 {
				gone = append(gone, model[0])
				model = model[1:]
				evicted++
			}
		}
		for i := range 30 * limit {
			if len(model) > 0 && r.IntN(3) == 0 {
				// A kept dialog grows: a body's worth more.
				d := model[r.IntN(len(model))]
				d.sdpBytes += r.IntN(3000)
				tab.weigh(d)
				trim()
			} else {
				d := &dialogMedia{callID: "call-" + itoa(i) + "@host", sdpBytes: r.IntN(1200)}
				_, h, ok := tab.lookup([]byte(d.callID))
				if ok {
					t.Fatalf("limit %d: a new Call-ID found", limit)
				}
				if len(model) == limit {
					gone = append(gone, model[0])
					model, evicted = model[1:], evicted+1
				}
				tab.add(h, d)
				model = append(model, d)
				trim()
			}
			var kept []*dialogMedia
			tab.each(func(d *dialogMedia) { kept = append(kept, d) })
			if !slices.Equal(kept, model) || tab.evicted != evicted {
				t.Fatalf("limit %d, step %d: table keeps %d (%d evicted), model %d (%d evicted)", limit, i, len(kept), tab.evicted, len(model), evicted)
			}
			if tab.bytes != charged() {
				t.Fatalf("limit %d, step %d: table charged %d bytes, model %d", limit, i, tab.bytes, charged())
			}
			if tab.bytes > maxBytes && len(model) > 1 {
				t.Fatalf("limit %d, step %d: %d bytes past %d with %d entries", limit, i, tab.bytes, maxBytes, len(model))
			}
		}
		for _, d := range model {
			if got, _, ok := tab.lookup([]byte(d.callID)); !ok || got != d || !tab.keeps(d) {
				t.Fatalf("limit %d: kept %s not found, or not marked kept", limit, d.callID)
			}
		}
		for _, d := range gone {
			if _, _, ok := tab.lookup([]byte(d.callID)); ok || tab.keeps(d) {
				t.Fatalf("limit %d: evicted %s still found, or still marked kept", limit, d.callID)
			}
		}
		if len(gone) == 0 {
			t.Fatalf("limit %d: nothing evicted", limit)
		}
	}
}
