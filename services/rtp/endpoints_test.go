package rtp

import (
	"math/rand/v2"
	"net/netip"
	"runtime"
	"testing"
)

// TestEndpointTableIsFIFO: the endpoint table keeps, finds and evicts
// what a fifo does, through growth, wrapping and probe runs shifted
// back, with addresses that differ only in family or zone.
func TestEndpointTableIsFIFO(t *testing.T) {
	for _, limit := range []int{1, 7, 100, 5000} {
		r := rand.New(rand.NewPCG(1, uint64(limit)))
		want, got := newFIFO[netip.AddrPort, *endpoint](limit), newEndpointTable(limit)
		for range 50 * limit {
			// Addresses from a space a few times the limit, so some are
			// found and some come back after their eviction.
			n := r.IntN(3*limit + 1)
			k := netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 0, byte(n >> 8), byte(n)}), uint16(n%7))
			switch n % 5 {
			case 0:
				k = netip.AddrPortFrom(netip.AddrFrom16(k.Addr().As16()), k.Port()) // the same, 4in6: another key
			case 1:
				k = netip.AddrPortFrom(netip.AddrFrom16(k.Addr().As16()).WithZone(itoa(n%3)), k.Port()) // and with zones
			}
			wv, wok := want.get(k)
			gv, h, gok := got.lookup(k)
			if wv != gv || wok != gok {
				t.Fatalf("limit %d: get(%v) = %p %v, fifo %p %v", limit, k, gv, gok, wv, wok)
			}
			if wok {
				continue
			}
			ep := new(endpoint)
			wold, wev := want.add(k, ep)
			gold, gev := got.add(k, h, ep)
			if wold != gold || wev != gev || want.len() != got.len() || want.evicted != got.evicted {
				t.Fatalf("limit %d: add(%v) evicted %v %v (%d of %d), fifo %v %v (%d of %d)", limit, k, gold, gev, got.evicted, got.len(), wold, wev, want.evicted, want.len())
			}
		}
	}
}

// TestFullEndpointsStayWithinFootprint fills the endpoint table to its
// bound and checks the heap grew no more than the footprint says.
func TestFullEndpointsStayWithinFootprint(t *testing.T) {
	o := Options{MaxBytes: 8 << 20}
	o.fill()
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	tab := newEndpointTable(o.MaxEndpoints)
	for n := range o.MaxEndpoints {
		k := netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 0, byte(n >> 8), byte(n)}), 20000)
		_, h, _ := tab.lookup(k)
		tab.add(k, h, new(endpoint))
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	heap := float64(after.HeapAlloc - before.HeapAlloc)
	accounted := float64(o.MaxEndpoints) * float64(endpointBytes())
	t.Logf("%d endpoints: heap grew %.0f bytes, accounted %.0f (%d each)", o.MaxEndpoints, heap, accounted, endpointBytes())
	if heap > accounted {
		t.Errorf("full endpoints grew the heap by %.0f bytes; the footprint says %.0f", heap, accounted)
	}
	runtime.KeepAlive(tab)
}
