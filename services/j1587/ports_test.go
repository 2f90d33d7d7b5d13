package j1587

import (
	"runtime"
	"testing"
	"time"

	"fieldtap/services/ring"
)

// TestPortsKeepTheirOwnTraffic is the reason ports exist: two J1708
// lines must not merge into one ring or one set of tables.
func TestPortsKeepTheirOwnTraffic(t *testing.T) {
	st, err := New(Limits{Items: 4, Bytes: 4 * MessageBytes()})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := st.Port("j1708")
	b, _ := st.Port("j1708b")
	t0 := time.Unix(1000, 0)
	for i := range 6 { // a overflows its own ring; b is untouched by that
		a.Add(t0.Add(time.Duration(i)*time.Second), withSum(0x80, 84, byte(i)), false)
	}
	b.Add(t0.Add(10*time.Second), withSum(0x88, 84, 9), false)
	b.Add(t0.Add(11*time.Second), withSum(0x88, 0xC2, 0), false)

	if sa, sb := a.Summary(), b.Summary(); sa.Messages != 6 || sb.Messages != 2 || sa.Stored.Items != 4 || sb.Stored.Items != 2 || sa.Stored.Evicted != 2 {
		t.Errorf("per port: a %d messages (%d kept, %d evicted), b %d (%d kept); want 6 (4, 2) and 2 (2)",
			sa.Messages, sa.Stored.Items, sa.Stored.Evicted, sb.Messages, sb.Stored.Items)
	}
	if got := len(a.Parameters(Any)); got != 1 {
		t.Errorf("port a has %d parameters, want its own 1", got)
	}
	all := st.Summary()
	if all.Messages != 8 || len(all.MIDs) != 2 || all.Stored.Items != 6 {
		t.Errorf("store: %d messages over %d MIDs, %d kept; want 8 over 2, 6 kept", all.Messages, len(all.MIDs), all.Stored.Items)
	}
	if ft := st.FaultTables(); ft[0x88].IsZero() || len(ft) != 1 {
		t.Errorf("fault tables over both ports = %v, want MID 136's", ft)
	}
	if st.Lookup("j1708b") != b || st.Lookup("nope") != nil || len(st.Ports()) != 2 {
		t.Error("Lookup/Ports do not list the two ports")
	}
}

func TestNewRefusesBadLimits(t *testing.T) {
	for _, l := range []Limits{{Items: -1}, {Bytes: -1}, {Items: 10, Bytes: 1}} {
		if _, err := New(l); err == nil {
			t.Errorf("New(%+v) accepted", l)
		}
	}
}

// TestAccountedBytesMatchTheHeap checks that a message costs what the
// ring accounts: a Record holds its bytes inline.
func TestAccountedBytesMatchTheHeap(t *testing.T) {
	const n = 200 * 256
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	st, _ := New(ring.Limits{Items: n, Bytes: 1 << 30})
	p, _ := st.Port("j1708")
	msg := withSum(0x80, 84, 1)
	t0 := time.Unix(1000, 0)
	for i := range n {
		p.Add(t0.Add(time.Duration(i)*time.Millisecond), msg, false)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	heap := float64(after.HeapAlloc - before.HeapAlloc)
	if acct := float64(p.MessageStats().Bytes); acct < heap*0.95 || acct > heap*1.10 {
		t.Errorf("ring accounts %.0f bytes for %d messages, the heap grew %.0f", acct, n, heap)
	}
	runtime.KeepAlive(st)
}
