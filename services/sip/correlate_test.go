package sip

import (
	"fmt"
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
