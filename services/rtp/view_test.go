package rtp

import "testing"

// TestStreamFilter: each field narrows, a zero filter keeps every stream,
// the codec compares without case, and an ungrounded stream (no MOS)
// never matches max MOS.
func TestStreamFilter(t *testing.T) {
	mos, yes, no := 3.2, true, false
	scored := StreamView{CallID: "a", Codec: "PCMA", LostPct: 2, MOS: MOS{Value: &mos, Grounded: true}}
	ungrounded := StreamView{Orphaned: true, Codec: "PT96"}
	f := func(v float64) *float64 { return &v }
	cases := []struct {
		name       string
		filter     StreamFilter
		scored, un bool
	}{
		{name: "zero keeps all", scored: true, un: true},
		{name: "call", filter: StreamFilter{CallID: "a"}, scored: true},
		{name: "orphaned", filter: StreamFilter{Orphaned: &yes}, un: true},
		{name: "signalled", filter: StreamFilter{Orphaned: &no}, scored: true},
		{name: "codec any case", filter: StreamFilter{Codec: "pcma"}, scored: true},
		{name: "loss at least", filter: StreamFilter{MinLossPct: f(2)}, scored: true},
		{name: "loss above", filter: StreamFilter{MinLossPct: f(2.5)}},
		{name: "mos at most", filter: StreamFilter{MaxMOS: f(3.2)}, scored: true},
		{name: "mos below", filter: StreamFilter{MaxMOS: f(3)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.filter.Match(scored); got != tc.scored {
				t.Errorf("scored stream: %v, want %v", got, tc.scored)
			}
			if got := tc.filter.Match(ungrounded); got != tc.un {
				t.Errorf("ungrounded orphan: %v, want %v", got, tc.un)
			}
		})
	}
}

// TestReportsAbout: a stream's reports are the SRs its sender sent and
// those whose blocks name its SSRC, in the order kept; others are left.
func TestReportsAbout(t *testing.T) {
	sn := &Snapshot{Reports: []Report{
		{Type: "SR", SenderSSRC: 1},
		{Type: "RR", SenderSSRC: 9, Blocks: []ReportBlock{{SSRC: 8}}},
		{Type: "RR", SenderSSRC: 7, Blocks: []ReportBlock{{SSRC: 8}, {SSRC: 1}}},
	}}
	got := sn.ReportsAbout([]StreamView{{Key: Key{SSRC: 1}}})
	if len(got) != 2 || got[0].SenderSSRC != 1 || got[1].SenderSSRC != 7 {
		t.Errorf("reports about SSRC 1: %+v, want the SR it sent and the RR naming it", got)
	}
	if got := sn.ReportsAbout(nil); len(got) != 0 {
		t.Errorf("reports about no stream: %+v", got)
	}
}
