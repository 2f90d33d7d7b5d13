package sip

import (
	"maps"
	"math/rand/v2"
	"strconv"
	"testing"
)

// TestTallyCountsAsBump: a tally shows the counts bump gives a map, keys
// past maxCountKeys folded into OtherKey, a sender's own "other" method
// among them, over a few keys and over many more than the bound.
func TestTallyCountsAsBump(t *testing.T) {
	for _, distinct := range []int{3, tallyScan + 1, 40, 3 * maxCountKeys} {
		r := rand.New(rand.NewPCG(1, uint64(distinct)))
		want, wantResp := map[string]uint64{}, map[string]uint64{}
		req := tally[string]{other: OtherKey, name: func(k string) string { return k }}
		resp := tally[respKey]{other: otherResp, name: respKey.name}
		for range 20 * distinct {
			k := "M" + strconv.Itoa(r.IntN(distinct))
			if r.IntN(50) == 0 {
				k = OtherKey
			}
			bump(want, k)
			req.add(k)
			rk := respKey{100 + r.IntN(distinct), "INVITE"}
			bump(wantResp, strconv.Itoa(rk.code)+" "+rk.method)
			resp.add(rk)
		}
		if got := req.counts(); !maps.Equal(got, want) {
			t.Errorf("%d distinct methods: tally has %d keys, bump %d", distinct, len(got), len(want))
		}
		if got := resp.counts(); !maps.Equal(got, wantResp) {
			t.Errorf("%d distinct responses: tally has %d keys, bump %d", distinct, len(got), len(wantResp))
		}
	}
}
