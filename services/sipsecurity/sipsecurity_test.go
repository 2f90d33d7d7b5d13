package sipsecurity

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"fieldtap/drivers/pcapfile"
	"fieldtap/services/netdecode"
	"fieldtap/services/sip"
	"fieldtap/tools/refdata"
)

func add(t testing.TB, st *sip.Store, at time.Time, src, dst string, raw string) {
	t.Helper()
	var m sip.Parsed
	if err := m.Parse([]byte(raw)); err != nil {
		t.Fatal(err)
	}
	st.Add(sip.Meta{Time: at, Src: netip.MustParseAddrPort(src), Dst: netip.MustParseAddrPort(dst), Transport: sip.TransportUDP}, &m, []byte(raw))
}

func msg(start, callID, to, method string, cseq int, extra string) string {
	return fmt.Sprintf("%s\r\nVia: SIP/2.0/UDP h;branch=z9hG4bK%s-%d\r\nFrom: <sip:x@h>;tag=1\r\nTo: <sip:%s@h>\r\nCall-ID: %s\r\nCSeq: %d %s\r\n%s\r\n",
		start, callID, cseq, to, callID, cseq, method, extra)
}

// A scanner sweeps OPTIONS over 25 addresses in 25 s, then guesses a
// password with 30 REGISTERs each answered 401 in 30 s; a phone
// registers twice, challenged once.
func TestFindingsOnAnAttack(t *testing.T) {
	st, _ := sip.New(sip.Limits{})
	t0 := time.Unix(1000, 0)
	const scanner = "203.0.113.9:5070"
	for i := range 25 {
		id := fmt.Sprintf("o%d", i)
		dst := fmt.Sprintf("192.0.2.%d:5060", i+1)
		add(t, st, t0.Add(time.Duration(i)*time.Second), scanner, dst, msg("OPTIONS sip:100@h SIP/2.0", id, "100", "OPTIONS", 1, "User-Agent: friendly-scanner\r\n"))
	}
	for i := range 30 {
		at := t0.Add(time.Minute + time.Duration(i)*time.Second)
		add(t, st, at, scanner, "192.0.2.1:5060", msg("REGISTER sip:h SIP/2.0", "r", "100", "REGISTER", i+1, ""))
		add(t, st, at.Add(10*time.Millisecond), "192.0.2.1:5060", scanner, msg("SIP/2.0 401 Unauthorized", "r", "100", "REGISTER", i+1, ""))
	}
	const phone = "198.51.100.7:5060"
	add(t, st, t0, phone, "192.0.2.1:5060", msg("REGISTER sip:h SIP/2.0", "p", "200", "REGISTER", 1, ""))
	add(t, st, t0, "192.0.2.1:5060", phone, msg("SIP/2.0 401 Unauthorized", "p", "200", "REGISTER", 1, ""))
	add(t, st, t0.Add(time.Second), phone, "192.0.2.1:5060", msg("REGISTER sip:h SIP/2.0", "p", "200", "REGISTER", 2, ""))

	r := Analyse(st.Snapshot().Dialogs, Defaults)
	got := map[string]string{}
	for _, f := range r.Findings {
		got[f.Kind] = fmt.Sprintf("%s %d", f.Source, f.Total)
		if len(f.Evidence) != min(f.Total, MaxEvidence) || f.More != max(f.Total-MaxEvidence, 0) {
			t.Errorf("%s: %d evidence rows and %d more for %d", f.Kind, len(f.Evidence), f.More, f.Total)
		}
	}
	want := map[string]string{KindOptionsSweep: "203.0.113.9 25", KindAuthStorm: "203.0.113.9 30", KindScanner: "203.0.113.9 25"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("findings %v, want %v", got, want)
	}
	// A lower bar also flags the scanner's REGISTERs; never the phone.
	th := Defaults
	th.Registers = 30
	for _, f := range Analyse(st.Snapshot().Dialogs, th).Findings {
		if f.Source.String() == "198.51.100.7" {
			t.Errorf("the phone is flagged: %+v", f)
		}
	}
}

func TestFindingsAreBounded(t *testing.T) {
	st, _ := sip.New(sip.Limits{})
	t0 := time.Unix(1000, 0)
	for s := range MaxFindings + 5 {
		src := fmt.Sprintf("10.0.%d.%d:5060", s/200, s%200+1)
		add(t, st, t0, src, "192.0.2.1:5060", msg("OPTIONS sip:h SIP/2.0", fmt.Sprint("s", s), "1", "OPTIONS", 1, "User-Agent: sipcli/v1.8\r\n"))
	}
	r := Analyse(st.Snapshot().Dialogs, Defaults)
	if len(r.Findings) != MaxFindings || r.FindingsLeft != 5 {
		t.Errorf("%d findings, %d left, want %d and 5", len(r.Findings), r.FindingsLeft, MaxFindings)
	}
}

// Two INVITE bursts from one source: 150 in 30 s, a quiet 50 s (less
// than the 60 s window), 150 more: one episode. After 10 quiet minutes a
// third burst is a new episode with its own ID.
func TestEpisodesMergeAcrossWindows(t *testing.T) {
	st, _ := sip.New(sip.Limits{})
	t0 := time.Unix(1000, 0)
	const src = "203.0.113.9:5070"
	burst := func(at time.Time, tag string, n int) {
		for i := range n {
			id := fmt.Sprintf("%s%d", tag, i)
			when := at.Add(time.Duration(i) * 200 * time.Millisecond)
			add(t, st, when, src, "192.0.2.1:5060", msg("INVITE sip:100@h SIP/2.0", id, fmt.Sprint(100+i%12), "INVITE", 1, "User-Agent: pplsip\r\n"))
			add(t, st, when.Add(time.Millisecond), "192.0.2.1:5060", src, msg("SIP/2.0 403 Forbidden", id, fmt.Sprint(100+i%12), "INVITE", 1, "Server: pbx\r\n"))
		}
	}
	burst(t0, "a", 150)
	burst(t0.Add(80*time.Second), "b", 150)
	burst(t0.Add(15*time.Minute), "c", 130)
	r := Analyse(st.Snapshot().Dialogs, Defaults)
	if len(r.Findings) != 2 {
		t.Fatalf("%d findings, want 2: %+v", len(r.Findings), r.Findings)
	}
	f := r.Findings[0]
	if f.Kind != KindInviteFlood || f.Total != 300 || f.Answered4xx != 300 || f.Peak != 150 || !f.First.Equal(t0) ||
		!f.Last.Equal(t0.Add(80*time.Second+149*200*time.Millisecond)) || f.ID != "invite_flood/203.0.113.9/1970-01-01T00:16:40Z" {
		t.Errorf("first episode %s: total %d, 4xx %d, peak %d, %v to %v", f.ID, f.Total, f.Answered4xx, f.Peak, f.First, f.Last)
	}
	// 12 To users: 10 listed, 2 counted (24 events each).
	if len(f.Targets.Top) != MaxListed || f.Targets.Others != 2 || f.Targets.OthersEvents != 48 || f.Targets.Top[0].Events != 26 {
		t.Errorf("targets %+v", f.Targets)
	}
	if fmt.Sprint(f.UserAgents.Top) != "[{pbx 300} {pplsip 300}]" || len(f.Sources.Top) != 1 || f.More != 290 {
		t.Errorf("user agents %v, sources %v, more %d", f.UserAgents.Top, f.Sources.Top, f.More)
	}
	if g := r.Findings[1]; g.Total != 130 || !g.First.Equal(t0.Add(15*time.Minute)) || g.ID == f.ID {
		t.Errorf("second episode %s: total %d from %v", g.ID, g.Total, g.First)
	}
}

// branch-scenario-sipp.pcapng is a SIPp load run from 127.0.0.1 over 133 s:
// tshark 4.0.17 (`-Y 'sip.Method == "INVITE"' -T fields -e frame.time_epoch
// -e sip.Via.branch`, the same for REGISTER, and `-Y 'sip.CSeq.method ==
// "INVITE" && sip.Status-Code == 403'`) gives 1,334 REGISTER and 1,334
// INVITE transactions, at most 601 of each in any 60 s window, the INVITEs
// from 21:52:35.303579687 to 21:54:48.601474824 UTC, 1,148 answered 403.
// The flood never pauses: each is one episode of the whole capture.
func TestFloodsOnTheSIPpCapture(t *testing.T) {
	st, _ := sip.New(sip.Limits{})
	a := sip.NewAnalyser(st, netdecode.Options{})
	refdata.EachRecord(t, filepath.Join(refdata.Dir(t, "sip"), "branch-scenario-sipp.pcapng"), func(rec pcapfile.Record) { a.Feed(rec.Time, rec.Link, rec.Data) })
	r := Analyse(st.Snapshot().Dialogs, Defaults)
	got := map[string]string{}
	for _, f := range r.Findings {
		got[f.Kind] = fmt.Sprintf("%s total %d peak %d 4xx %d", f.Source, f.Total, f.Peak, f.Answered4xx)
		if f.Kind == KindInviteFlood {
			first, last := f.First.UTC().Format(time.RFC3339Nano), f.Last.UTC().Format(time.RFC3339Nano)
			if first != "2016-11-17T21:52:35.303579687Z" || last != "2016-11-17T21:54:48.601474824Z" {
				t.Errorf("invite flood from %s to %s", first, last)
			}
			// The INVITE follows the dialog's REGISTER (To ua1): its To user is not kept.
			if len(f.Targets.Top) != 1 || f.Targets.Top[0].Value != (Target{Dst: netip.MustParseAddrPort("127.0.0.1:5060")}) || f.Targets.Top[0].Events != 1334 {
				t.Errorf("targets %+v", f.Targets)
			}
		}
	}
	want := map[string]string{KindRegisterFlood: "127.0.0.1 total 1334 peak 601 4xx 0", KindInviteFlood: "127.0.0.1 total 1334 peak 601 4xx 1148"}
	if fmt.Sprint(got) != fmt.Sprint(want) || r.Dialogs != 1334 {
		t.Errorf("findings %v over %d dialogs, want %v over 1334", got, r.Dialogs, want)
	}
}

func BenchmarkAnalyseBranchScenario(b *testing.B) {
	st, _ := sip.New(sip.Limits{})
	a := sip.NewAnalyser(st, netdecode.Options{})
	refdata.EachRecord(b, filepath.Join(refdata.Dir(b, "sip"), "branch-scenario-sipp.pcapng"), func(rec pcapfile.Record) { a.Feed(rec.Time, rec.Link, rec.Data) })
	ds := st.Snapshot().Dialogs
	b.ReportAllocs()
	for b.Loop() {
		Analyse(ds, Defaults)
	}
}

// BenchmarkAnalyseUserAgents is an analysis of 20,000 calls from 100
// phones of five models, each call's INVITE with its User-Agent, as
// every real phone sends one: the scanner test reads every value.
func BenchmarkAnalyseUserAgents(b *testing.B) {
	st, _ := sip.New(sip.Limits{DialogBytes: 1 << 30, MessageBytes: 1 << 30})
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 20_000 {
		ua := fmt.Sprintf("User-Agent: Yealink SIP-T%d 66.86.0.15\r\n", 40+i%5)
		add(b, st, t0.Add(time.Duration(i)*time.Second), fmt.Sprintf("192.0.2.%d:5060", 1+i%100), "198.51.100.1:5060",
			msg("INVITE sip:2001@h SIP/2.0", fmt.Sprintf("c%d", i), "2001", "INVITE", 1, ua))
	}
	ds := st.Snapshot().Dialogs
	b.ReportAllocs()
	for b.Loop() {
		Analyse(ds, Defaults)
	}
}

// TestTallierCountsRuns holds the tallier, which counts a run of one
// value apart from its map, to a plain count of every value: values in
// runs, alternating, and returning after others.
func TestTallierCountsRuns(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 9))
	for round := range 500 {
		var tl tallier[string]
		want := map[string]int{}
		for range rng.IntN(200) {
			v := fmt.Sprint(rng.IntN(1 + round%7))
			for range 1 + rng.IntN(4) {
				tl.add(v)
				want[v]++
			}
		}
		got := tl.tally()
		n, events := 0, 0
		for _, c := range got.Top {
			if c.Events != want[c.Value] {
				t.Fatalf("round %d: %q counted %d, want %d", round, c.Value, c.Events, want[c.Value])
			}
			n, events = n+1, events+c.Events
		}
		total := 0
		for _, c := range want {
			total += c
		}
		if n+got.Others != len(want) || events+got.OthersEvents != total {
			t.Fatalf("round %d: %d values and %d events tallied, want %d and %d", round, n+got.Others, events+got.OthersEvents, len(want), total)
		}
	}
}

// TestAgentsMatchWithoutCase: a known name matches a User-Agent whatever
// either's case, a remembered answer is the one a search gives, and past
// maxAgentsSeen values are still searched, not remembered.
func TestAgentsMatchWithoutCase(t *testing.T) {
	a := newAgents([]string{"SIPVicious", "friendly-scanner"})
	for _, c := range []struct {
		uas  []string
		want string
	}{
		{[]string{"Linphone/5.2"}, ""},
		{[]string{"Linphone/5.2", "sipvicious 0.3.4"}, "sipvicious 0.3.4"},
		{[]string{"FRIENDLY-SCANNER"}, "FRIENDLY-SCANNER"},
		{[]string{"Linphone/5.2"}, ""}, // remembered, still no match
		{[]string{"x SipVicious"}, "x SipVicious"},
	} {
		for range 2 { // the second time from what was remembered
			got, ok := a.scanner(c.uas)
			if got != c.want || ok != (c.want != "") {
				t.Errorf("scanner(%q) = %q, %v; want %q", c.uas, got, ok, c.want)
			}
		}
	}
	for i := range maxAgentsSeen + 10 {
		a.is(fmt.Sprintf("phone-%d", i))
	}
	if len(a.seen) > maxAgentsSeen {
		t.Errorf("%d answers remembered, bound %d", len(a.seen), maxAgentsSeen)
	}
	if _, ok := a.scanner([]string{"Friendly-Scanner past the bound"}); !ok {
		t.Error("a value past the bound was not searched")
	}
}

// TestLiveViewsMatchAnAnalysis: on a live store (new dialogs between
// snapshots, earlier ones answered, the oldest evicted), each snapshot's
// view, whose events are carried from the snapshot before, finds what an
// analysis of the snapshot's dialogs finds.
func TestLiveViewsMatchAnAnalysis(t *testing.T) {
	st, _ := sip.New(sip.Limits{Dialogs: 400, DialogBytes: 1 << 30, MessageBytes: 1 << 22})
	th := Thresholds{Window: time.Minute, Registers: 8, AuthChallenges: 6, Invites: 10, OptionsTargets: 5, ScannerAgents: []string{"Friendly-Scanner", "sipcli"}}
	rng := rand.New(rand.NewPCG(7, 11))
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := t0
	n := 0
	var pending []string // REGISTERs not answered yet
	found := 0
	for round := range 12 {
		for range 120 {
			at = at.Add(time.Duration(rng.IntN(2000)) * time.Millisecond)
			src := fmt.Sprintf("203.0.113.%d:5060", 1+rng.IntN(4))
			id := fmt.Sprintf("c%d", n)
			n++
			switch rng.IntN(5) {
			case 0:
				add(t, st, at, src, "192.0.2.1:5060", msg("REGISTER sip:h SIP/2.0", id, "100", "REGISTER", 1, ""))
				pending = append(pending, id+" "+src)
			case 1:
				ua := []string{"", "User-Agent: friendly-scanner\r\n", "User-Agent: Yealink SIP-T46\r\n"}[rng.IntN(3)]
				add(t, st, at, src, "192.0.2.1:5060", msg("INVITE sip:2001@h SIP/2.0", id, "2001", "INVITE", 1, ua))
			case 2:
				dst := fmt.Sprintf("192.0.2.%d:5060", 1+rng.IntN(20))
				add(t, st, at, src, dst, msg("OPTIONS sip:100@h SIP/2.0", id, fmt.Sprint(100+rng.IntN(9)), "OPTIONS", 1, ""))
			default:
				if len(pending) > 0 { // an earlier REGISTER answered 401: its dialog changes
					k := rng.IntN(len(pending))
					var pid, psrc string
					fmt.Sscan(pending[k], &pid, &psrc)
					pending = slices.Delete(pending, k, k+1)
					add(t, st, at, "192.0.2.1:5060", psrc, msg("SIP/2.0 401 Unauthorized", pid, "100", "REGISTER", 1, ""))
				}
			}
		}
		sn := st.Snapshot()
		got, want := AnalyseView(sn, nil, th), Analyse(sn.Dialogs, th)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("round %d: the view found %d findings (%d dialogs), an analysis %d (%d)", round, len(got.Findings), got.Dialogs, len(want.Findings), want.Dialogs)
		}
		found += len(got.Findings)
	}
	if found == 0 {
		t.Fatal("no finding in any round: the test wants findings to compare")
	}
	if st.DialogStats().Evicted == 0 {
		t.Fatal("no dialog evicted: the test wants the oldest gone between snapshots")
	}
}
