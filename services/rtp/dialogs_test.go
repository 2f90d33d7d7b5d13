package rtp

import (
	"math/rand/v2"
	"net/netip"
	"runtime"
	"strings"
	"testing"
	"time"

	"fieldtap/services/sip"
)

// TestDialogTableIsFIFO: the dialog table keeps, finds and evicts what
// a fifo does, through growth, wrapping and probe runs shifted back.
func TestDialogTableIsFIFO(t *testing.T) {
	for _, limit := range []int{1, 7, 100, 5000} {
		r := rand.New(rand.NewPCG(2, uint64(limit)))
		want, got := newFIFO[string, *dialogMedia](limit), newDialogTable(limit)
		for range 50 * limit {
			// Call-IDs from a space a few times the limit, so some are
			// found and some come back after their eviction.
			id := "call-" + itoa(r.IntN(3*limit+1)) + "@host"
			wd, wok := want.get(id)
			gd, h, gok := got.lookup([]byte(id))
			if wd != gd || wok != gok {
				t.Fatalf("limit %d: lookup(%s) = %p %v, fifo %p %v", limit, id, gd, gok, wd, wok)
			}
			if wok {
				continue
			}
			d := &dialogMedia{callID: id}
			want.add(id, d)
			got.add(h, d)
			if want.len() != got.len() || want.evicted != got.evicted {
				t.Fatalf("limit %d: add(%s) left %d (%d evicted), fifo %d (%d evicted)", limit, id, got.len(), got.evicted, want.len(), want.evicted)
			}
		}
		var wids, gids []string
		want.each(func(id string, _ *dialogMedia) { wids = append(wids, id) })
		got.each(func(d *dialogMedia) { gids = append(gids, d.callID) })
		if strings.Join(wids, " ") != strings.Join(gids, " ") {
			t.Fatalf("limit %d: each visits %v, fifo %v", limit, gids, wids)
		}
	}
}

// TestFullDialogsStayWithinFootprint signals an offer and an answer for
// every dialog the bound allows and checks the heap grew no more than
// the footprint says the dialogs and their endpoints cost.
func TestFullDialogsStayWithinFootprint(t *testing.T) {
	o := Options{MaxBytes: 8 << 20}
	o.fill()
	var msgs []sip.Parsed
	var metas []sip.Meta
	for i := range o.MaxDialogs {
		id := "a84b4c76e66710" + itoa(1_000_000+i) + "@pc33.example.com" // ~40 bytes, as phones write them
		for _, resp := range []bool{false, true} {
			m, host := sdpMessage(t, id, i, resp, 10000+2*i), "192.0.2.1"
			if resp {
				host = "198.51.100.1"
			}
			msgs = append(msgs, m)
			metas = append(metas, sip.Meta{Time: time.Unix(int64(1000+i), 0), Src: netip.MustParseAddrPort(host + ":5060")})
		}
	}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	a := NewAnalyser(o)
	for i := range msgs {
		a.SIPMessage(metas[i], &msgs[i])
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(msgs)
	u := a.Usage()
	if u.Dialogs != o.MaxDialogs || a.st.EndpointsEvicted != 0 {
		t.Fatalf("%d of %d dialogs, %d endpoints evicted", u.Dialogs, o.MaxDialogs, a.st.EndpointsEvicted)
	}
	heap := float64(after.HeapAlloc - before.HeapAlloc)
	accounted := float64(analyserBytes()) + float64(u.Dialogs)*float64(dialogBytes()) + float64(u.Endpoints)*float64(endpointBytes())
	t.Logf("%d dialogs, %d endpoints: heap grew %.0f bytes, accounted %.0f (%d a dialog, %d an endpoint)", u.Dialogs, u.Endpoints, heap, accounted, dialogBytes(), endpointBytes())
	if heap > accounted {
		t.Errorf("full dialogs grew the heap by %.0f bytes; the footprint says %.0f", heap, accounted)
	}
	runtime.KeepAlive(a)
}
