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
		want, got := newFIFO[netip.AddrPort, *endpoint](limit), newEndpointTable(limit, 0)
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
			_, wev := want.add(k, ep)
			gev := got.add(k, h, ep)
			if wev != gev || want.len() != got.len() || want.evicted != got.evicted {
				t.Fatalf("limit %d: add(%v) evicted %v (%d of %d), fifo %v (%d of %d)", limit, k, gev, got.evicted, got.len(), wev, want.evicted, want.len())
			}
		}
	}
}

// TestPairHash: an address's pair hashed from the address's hash is
// hashed as on its own, for the next port of an even or odd one, another
// port, another address and a zone.
func TestPairHash(t *testing.T) {
	tab := newEndpointTable(1, 0)
	for _, s := range []string{"192.0.2.1:4000", "192.0.2.1:4001", "192.0.2.1:65534", "192.0.2.1:65535", "192.0.2.1:0", "[2001:db8::1]:5000", "[fe80::1%eth0]:5000"} {
		k := netip.MustParseAddrPort(s)
		for _, next := range []netip.AddrPort{
			netip.AddrPortFrom(k.Addr(), k.Port()+1), netip.AddrPortFrom(k.Addr(), k.Port()+2), netip.AddrPortFrom(k.Addr(), k.Port()-1),
			netip.AddrPortFrom(netip.MustParseAddr("192.0.2.2"), k.Port()+1), netip.AddrPortFrom(k.Addr().WithZone("x"), k.Port()+1),
		} {
			if got, want := tab.pairHash(k, tab.hash(k), next), tab.hash(next); got != want {
				t.Errorf("pairHash(%v, %v) = %#x, hash %#x", k, next, got, want)
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
	tab := newEndpointTable(o.MaxEndpoints, 0)
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

// BenchmarkEndpointTableChurn is the media hook's table work for one new
// m= line at the default bound: its RTP and RTCP addresses looked up and
// added to a full table, each evicting the oldest.
func BenchmarkEndpointTableChurn(b *testing.B) {
	tab := newEndpointTable(DefaultMaxEndpoints, 0)
	ep := new(endpoint)
	n := 0
	line := func() {
		// An address per m= line, an even RTP port and its RTCP port.
		ip := netip.AddrFrom4([4]byte{10, byte(n >> 16), byte(n >> 8), byte(n)})
		port := uint16(10000 + 2*(n%20000))
		for _, k := range []netip.AddrPort{netip.AddrPortFrom(ip, port), netip.AddrPortFrom(ip, port+1)} {
			if _, h, ok := tab.lookup(k); !ok {
				tab.add(k, h, ep)
			}
		}
		n++
	}
	for range DefaultMaxEndpoints {
		line()
	}
	b.ReportAllocs()
	for b.Loop() {
		line()
	}
	if tab.evicted == 0 {
		b.Fatal("the table never evicted")
	}
}
