package sip

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"
)

// legInvite is an INVITE from one user to another with extra header lines.
func legInvite(callID, from, to string, headers ...string) string {
	raw := fmt.Sprintf("INVITE sip:%s@h SIP/2.0\r\nVia: SIP/2.0/UDP h;branch=z9hG4bK%s\r\nFrom: <sip:%s@h>;tag=1\r\nTo: <sip:%s@h>\r\nCall-ID: %s\r\nCSeq: 1 INVITE\r\n\r\n",
		to, callID, from, to, callID)
	for _, h := range headers {
		raw = withHeader(raw, h)
	}
	return raw
}

const (
	uuidA   = "ab30317f1a784dc48ff824d0d3715d86"
	uuidNil = "00000000000000000000000000000000"
)

// A B2BUA call: leg a (alice → pbx), leg b (pbx → bob) carrying a's
// Session-ID as RFC 7989 §6 has the B2BUA pass it, leg c (a transfer)
// naming b's Call-ID in an X- header. d and e only share a callee with a
// and start within the heuristic window; f and g share a charging vector;
// n1 and n2 carry only the nil UUID.
func correlationStore(t *testing.T) *Snapshot {
	st := newStore(t, Limits{})
	t0 := time.Unix(1000, 0)
	steps := []struct {
		at  time.Duration
		raw string
	}{
		{0, legInvite("a", "alice", "pbx", "Session-ID: "+uuidA+";remote="+uuidNil)},
		{100 * time.Millisecond, legInvite("b", "pbx-out", "bob", "Session-ID: "+uuidA+";remote="+uuidNil)},
		{20 * time.Second, legInvite("c", "pbx-out", "carol", "X-Orig-Call-ID: b")},
		{1500 * time.Millisecond, legInvite("d", "dave", "pbx")},
		{3 * time.Second, legInvite("e", "erin", "pbx")},
		{60 * time.Second, legInvite("f", "frank", "x1", "P-Charging-Vector: icid-value=1234bc9876e;icid-generated-at=192.0.6.8;orig-ioi=home1.net")},
		{90 * time.Second, legInvite("g", "gina", "x2", "P-Charging-Vector: icid-value=1234bc9876e")},
		{120 * time.Second, legInvite("n1", "n1", "y1", "Session-ID: "+uuidNil)},
		{121 * time.Second, legInvite("n2", "n2", "y2", "Session-ID: "+uuidNil)},
	}
	for _, s := range steps {
		addRaw(t, st, t0.Add(s.at), s.raw)
	}
	return st.Snapshot()
}

func TestFindCorrelated(t *testing.T) {
	sn := correlationStore(t)
	tests := []struct {
		callID string
		want   map[string]string // correlated Call-ID → how
	}{
		{callID: "a", want: map[string]string{"b": BySessionID, "d": ByTiming}},
		{callID: "b", want: map[string]string{"a": BySessionID, "c": ByXHeader}},
		{callID: "c", want: map[string]string{"b": ByXHeader}},
		{callID: "e", want: map[string]string{"d": ByTiming}},
		{callID: "f", want: map[string]string{"g": ByChargingVector}},
		{callID: "n1", want: map[string]string{}},
	}
	for _, tc := range tests {
		t.Run(tc.callID, func(t *testing.T) {
			got := map[string]string{}
			cs, _ := FindCorrelated(sn.Dialogs, sn.Lookup(tc.callID))
			for _, c := range cs {
				got[c.D.CallID] = c.Evidence[0].By
				if c.Evidence[0].Heuristic != (c.Evidence[0].By == ByTiming) {
					t.Errorf("%s: heuristic label %v on %s", c.D.CallID, c.Evidence[0].Heuristic, c.Evidence[0].By)
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("correlated %v, want %v", got, tc.want)
			}
		})
	}
}

func TestCallTreeExpandsOnlyStrongEvidence(t *testing.T) {
	sn := correlationStore(t)
	nodes, truncated := CallTree(sn.Dialogs, sn.Lookup("a"))
	got := map[string]string{}
	for _, n := range nodes {
		got[n.D.CallID] = fmt.Sprintf("%s@%d", n.Parent, n.Depth)
	}
	// c is reached through b (strong evidence, transitively); d by the
	// heuristic from the root, never expanded, so e (d's heuristic
	// neighbour) is not in the tree.
	want := map[string]string{"a": "@0", "b": "a@1", "c": "b@2", "d": "a@1"}
	if fmt.Sprint(got) != fmt.Sprint(want) || truncated {
		t.Errorf("tree %v (truncated %v), want %v", got, truncated, want)
	}
}

// callTreeScan is CallTree as first written: every leg compared with
// every dialog.
func callTreeScan(ds []*Dialog, root *Dialog) ([]TreeNode, bool) {
	return callTree(ds, root, func(*Dialog) []*Dialog { return ds })
}

// TestCallTreeMatchesEveryDialogScan: on random stores whose calls carry
// Session-IDs, charging vectors, X- headers naming other calls' Call-IDs
// and a shared X- value (in half the stores on a quarter of the calls,
// past the tree's bound), and callees shared within the timing window,
// the tree from every dialog is the one comparing each leg with every
// dialog gave.
func TestCallTreeMatchesEveryDialogScan(t *testing.T) {
	deep, cut := 0, 0
	for seed := range uint64(8) {
		rng := rand.New(rand.NewPCG(seed, 5))
		st := newStore(t, Limits{})
		at := time.Unix(1000, 0)
		const calls = 300
		for i := range calls {
			var hs []string
			if rng.IntN(4) == 0 {
				hs = append(hs, fmt.Sprintf("Session-ID: %032x;remote=%032x", 1+rng.IntN(12), rng.IntN(3)))
			}
			if rng.IntN(5) == 0 {
				hs = append(hs, fmt.Sprintf("P-Charging-Vector: icid-value=icid%04d", rng.IntN(10)))
			}
			if i > 0 && rng.IntN(4) == 0 {
				hs = append(hs, fmt.Sprintf("X-Orig-Call-ID: s%d-%d", seed, rng.IntN(i)))
			}
			if rng.IntN([]int{4, 60}[seed%2]) == 0 { // in half the stores, too few to join most calls
				hs = append(hs, "X-Tenant: tenant-0001")
			}
			at = at.Add(time.Duration(rng.IntN(3000)) * time.Millisecond)
			addRaw(t, st, at, legInvite(fmt.Sprintf("s%d-%d", seed, i), fmt.Sprint("u", rng.IntN(20)), fmt.Sprint("v", rng.IntN(20)), hs...))
		}
		sn := st.Snapshot()
		for _, root := range sn.Dialogs {
			got, gotCut := CallTree(sn.Dialogs, root)
			want, wantCut := callTreeScan(sn.Dialogs, root)
			if !reflect.DeepEqual(got, want) || gotCut != wantCut {
				t.Fatalf("seed %d, root %s: %d legs (truncated %v), the scan %d (%v)", seed, root.CallID, len(got), gotCut, len(want), wantCut)
			}
			if got[len(got)-1].Depth > 2 {
				deep++
			}
			if gotCut {
				cut++
			}
		}
	}
	if deep == 0 || cut == 0 {
		t.Fatalf("%d trees deeper than two legs, %d truncated: the stores did not exercise them", deep, cut)
	}
}

// BenchmarkCallTreeConference: a conference of 40 legs sharing a
// Session-ID among 100,000 calls, its tree from one leg; scan is the
// former way, every leg compared with every dialog.
func BenchmarkCallTreeConference(b *testing.B) {
	st := newStore(b, Limits{DialogBytes: 1 << 30, MessageBytes: 1 << 30})
	at := time.Unix(1000, 0)
	for i := range 100_000 {
		var hs []string
		if i%2500 == 0 {
			hs = append(hs, "Session-ID: "+uuidA)
		}
		addRaw(b, st, at.Add(time.Duration(i)*time.Second), legInvite(fmt.Sprint("call-", i), fmt.Sprint("u", i), fmt.Sprint("v", i), hs...))
	}
	sn := st.Snapshot()
	root := sn.Lookup("call-0")
	for _, bc := range []struct {
		name string
		tree func([]*Dialog, *Dialog) ([]TreeNode, bool)
	}{{"index", CallTree}, {"scan", callTreeScan}} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				if nodes, _ := bc.tree(sn.Dialogs, root); len(nodes) != 40 {
					b.Fatalf("%d legs, want 40", len(nodes))
				}
			}
		})
	}
}
