package rules

// Ground truth: tshark, run by the test on the same files the box reads
// (the reference captures of ../shared/testdata/sip, whose
// PROVENANCE.md gives the same counts, and captures board/sim/sipgen
// writes). drivers/pcapfile, drivers/wire, board/sim/sipgen and tools/refdata
// are test-only imports.

import (
	"bytes"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"fieldtap/board/sim/sipgen"
	"fieldtap/drivers/pcapfile"
	"fieldtap/drivers/wire"
	"fieldtap/services/netdecode"
	"fieldtap/services/rtp"
	"fieldtap/services/sip"
	"fieldtap/services/sipsecurity"
	"fieldtap/tools/refdata"
)

// loaded is a capture read into the SIP store and the RTP analyser, as
// the daemon feeds them.
type loaded struct {
	st    *sip.Store
	sa    *sip.Analyser
	media *rtp.Analyser
}

func newLoaded(t *testing.T) *loaded {
	t.Helper()
	st, err := sip.New(sip.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	l := &loaded{st: st, sa: sip.NewAnalyser(st, netdecode.Options{}), media: rtp.NewAnalyser(rtp.Options{})}
	l.sa.SetMediaHook(l.media)
	return l
}

func load(t *testing.T, path string) *loaded {
	t.Helper()
	l := newLoaded(t)
	refdata.EachRecord(t, path, func(rec pcapfile.Record) { l.sa.Feed(rec.Time, rec.Link, rec.Data) })
	return l
}

func (l *loaded) box() Box { return Box{SIP: l.st, Media: l.media} }

// tsharkPath is tshark, or a skip naming the package.
func tsharkPath(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("tshark")
	if err != nil {
		t.Skip("tshark not installed (Debian package tshark)")
	}
	return p
}

// sipRow is one SIP message as tshark decodes it.
type sipRow struct {
	at             float64 // epoch seconds
	src, dst       string
	callID, method string
	status         int
	cseqMethod     string
	cseq           int
}

func tsharkSIP(t *testing.T, path string) []sipRow {
	t.Helper()
	out, err := exec.Command(tsharkPath(t), "-r", path, "-Y", "sip", "-T", "fields", "-E", "occurrence=f",
		"-e", "frame.time_epoch", "-e", "ip.src", "-e", "ip.dst", "-e", "sip.Call-ID", "-e", "sip.Method",
		"-e", "sip.Status-Code", "-e", "sip.CSeq.method", "-e", "sip.CSeq.seq").Output()
	if err != nil {
		t.Fatalf("tshark: %v", err)
	}
	var rows []sipRow
	for l := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(l, "\t")
		if len(f) != 8 {
			t.Fatalf("tshark line %q", l)
		}
		at, _ := strconv.ParseFloat(f[0], 64)
		status, _ := strconv.Atoi(f[5])
		cseq, _ := strconv.Atoi(f[7])
		rows = append(rows, sipRow{at: at, src: f[1], dst: f[2], callID: f[3], method: f[4], status: status, cseqMethod: f[6], cseq: cseq})
	}
	return rows
}

// tsharkCall is one Call-ID's INVITE as tshark's messages show it.
type tsharkCall struct {
	invite, ring float64 // first INVITE request, first 180/183 to it (0: none)
	src, dst     string  // the INVITE's addresses
	final        int     // first final response to the INVITE, 0 while none
}

// tsharkCalls gathers each Call-ID's INVITE (the captures here have one
// INVITE transaction per Call-ID: one call attempt each) and the newest
// SIP message's time.
func tsharkCalls(rows []sipRow) (map[string]*tsharkCall, float64) {
	calls := map[string]*tsharkCall{}
	var newest float64
	for _, r := range rows {
		newest = math.Max(newest, r.at)
		c := calls[r.callID]
		switch {
		case r.method == "INVITE" && c == nil:
			calls[r.callID] = &tsharkCall{invite: r.at, src: r.src, dst: r.dst}
		case c == nil || r.cseqMethod != "INVITE" || r.status == 0:
		case (r.status == 180 || r.status == 183) && c.ring == 0:
			c.ring = r.at
		case r.status >= 200 && c.final == 0:
			c.final = r.status
		}
	}
	return calls, newest
}

// userSide are the finals that end an attempt at the user (ITU-T E.425
// as GSMA IR.42 maps it to SIP, docs/sip.md): busy, unavailable,
// cancelled while ringing, busy everywhere, declined.
var userSide = []int{480, 486, 487, 600, 603}

// tsharkFigures are ASR, NER, the attempts with a final, and the PDD
// p50/p95 (nearest rank, in seconds) of the calls whose INVITE began in
// [end-window, end] and whose dst (when given) is dst.
func tsharkFigures(calls map[string]*tsharkCall, end float64, window time.Duration, dst string) (asr, ner float64, attempts int, p50, p95 float64, pdds int) {
	var answered, user int
	var pdd []float64
	for _, c := range calls {
		if c.invite < end-window.Seconds() || c.invite > end || (dst != "" && c.dst != dst) || c.final == 0 {
			continue
		}
		attempts++
		if c.final < 300 {
			answered++
		} else if slices.Contains(userSide, c.final) {
			user++
		}
		if c.ring != 0 {
			pdd = append(pdd, c.ring-c.invite)
		}
	}
	slices.Sort(pdd)
	rank := func(p float64) float64 {
		if len(pdd) == 0 {
			return math.NaN()
		}
		return pdd[max(int(math.Ceil(p/100*float64(len(pdd)))), 1)-1]
	}
	if attempts == 0 {
		return math.NaN(), math.NaN(), 0, rank(50), rank(95), len(pdd)
	}
	return float64(answered) / float64(attempts), float64(answered+user) / float64(attempts), attempts, rank(50), rank(95), len(pdd)
}

// near compares figures taken from tshark's 6-decimal epoch times.
func near(a, b float64) bool { return math.Abs(a-b) < 1e-5 }

// TestCallKindsMatchTshark: on the SIPp load run (1334 calls, 102
// answered and 1148 refused 403 of the 1250 with a final, PROVENANCE.md)
// and on a generated office hour (answered, busy 486, wrong number 404 and
// cancelled 487 calls between many phones), sip_asr, sip_ner and sip_pdd,
// for the whole box and per peer address, over the whole capture and over
// its last 30 s, equal the ratios and nearest-rank percentiles tshark's
// messages give, and their population is tshark's count of attempts.
func TestCallKindsMatchTshark(t *testing.T) {
	gen := filepath.Join(t.TempDir(), "office.pcapng")
	var buf bytes.Buffer
	if err := sipgen.WritePcapng(&buf, sipgen.Options{Seed: 7, Start: time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC), Duration: 3 * time.Minute, Calls: 36, SignallingOnly: true}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(gen, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	files := []struct {
		path, group string
	}{
		{refdata.File(t, "sip", "branch-scenario-sipp.pcapng"), "127.0.0.1"},
		{gen, ""}, // the busiest callee
	}
	for _, f := range files {
		t.Run(filepath.Base(f.path), func(t *testing.T) {
			rows := tsharkSIP(t, f.path)
			calls, end := tsharkCalls(rows)
			key := f.group
			if key == "" {
				n := map[string]int{}
				for _, c := range calls {
					n[c.dst]++
				}
				for dst, k := range n {
					if k > n[key] || k == n[key] && dst < key {
						key = dst
					}
				}
			}
			b := load(t, f.path).box()
			for _, w := range []time.Duration{time.Hour, 30 * time.Second} {
				for _, dst := range []string{"", key} {
					asr, ner, attempts, p50, p95, pdds := tsharkFigures(calls, end, w, dst)
					rule := Rule{Window: w}
					if dst != "" {
						rule.Group, rule.Key = "dst_ip", dst
					}
					for _, c := range []struct {
						kind string
						pct  int
						want float64
						pop  int
					}{
						{KindSIPASR, 0, asr, attempts}, {KindSIPNER, 0, ner, attempts},
						{KindSIPPDD, 50, p50, pdds}, {KindSIPPDD, 95, p95, pdds},
					} {
						rule.Kind, rule.Percentile = c.kind, c.pct
						rd := b.Read(rule, time.Now())
						if c.pop == 0 {
							// Nothing to measure: no data, never 0.
							if rd.OK || rd.Why == "" {
								t.Errorf("%s p%d window %v dst %q: %+v, want no value (tshark: no attempt)", c.kind, c.pct, w, dst, rd)
							}
							continue
						}
						if !rd.OK || !near(rd.Value, c.want) || rd.Population != c.pop {
							t.Errorf("%s p%d window %v dst %q: %+v, want %v over %d (tshark)", c.kind, c.pct, w, dst, rd, c.want, c.pop)
						}
						if rd.Evidence.Tool != "group_dialogs" || rd.Evidence.Figures["attempts"] != float64(attempts) {
							t.Errorf("%s evidence %+v", c.kind, rd.Evidence)
						}
					}
					t.Logf("window %v dst %q: ASR %.4f NER %.4f over %d attempts, PDD p50 %.3f s p95 %.3f s over %d", w, dst, asr, ner, attempts, p50, p95, pdds)
				}
			}
			// A peer the capture never called has no attempt: no data.
			if rd := b.Read(Rule{Kind: KindSIPASR, Window: time.Hour, Group: "dst_ip", Key: "192.0.2.254"}, time.Now()); rd.OK ||
				!strings.Contains(rd.Why, "no call attempt") {
				t.Errorf("unknown peer: %+v", rd)
			}
		})
	}
}

// TestCallRuleFiresWithGuard: the SIPp run's ASR (102/1250 = 0.0816,
// PROVENANCE.md) fires a rule "below 0.5" once its population reaches
// min_samples, and stays no_data, saying why, under a guard larger than
// the 1250 attempts.
func TestCallRuleFiresWithGuard(t *testing.T) {
	b := load(t, refdata.File(t, "sip", "branch-scenario-sipp.pcapng")).box()
	low := Rule{Name: "asr", Kind: KindSIPASR, Group: "dst_ip", Key: "127.0.0.1", Op: Below, Value: 0.5, Window: time.Hour, MinSamples: 100, Severity: "critical"}
	big := low
	big.Name, big.MinSamples = "asr-big", 2000
	e, err := New([]Rule{low, big}, b)
	if err != nil {
		t.Fatal(err)
	}
	e.Tick(t0)
	vs := e.Verdicts()
	if v := vs[0]; v.State != StateFiring || !near(v.Value, 102.0/1250) || v.Samples != 1250 || v.Evidence.Args["filter"] != `dst_ip == "127.0.0.1"` {
		t.Errorf("guarded rule: %+v", v)
	}
	if v := vs[1]; v.State != StateNoData || v.HasValue || v.Why != "1250 call attempts with a final response in the window, fewer than the population guard 2000" {
		t.Errorf("over-guarded rule: %+v", v)
	}
}

// TestMOSShareCountsBandOrWorse: a generated hour of calls with 5 %
// packet loss scores its streams across bands; mos_share over a band
// counts the scored streams in it or a worse one, its population is every
// scored stream (tshark's rtp,streams count, every stream being G.711),
// and the evidence's rtp_streams max_mos selects exactly the streams
// counted.
func TestMOSShareCountsBandOrWorse(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lossy.pcapng")
	var buf bytes.Buffer
	if err := sipgen.WritePcapng(&buf, sipgen.Options{Seed: 3, Start: time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC), Duration: 2 * time.Minute, Calls: 12,
		Impair: sipgen.Impairment{LossPct: 5, JitterMs: 30}}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(tsharkPath(t), "-r", path, "-q", "-z", "rtp,streams").Output()
	if err != nil {
		t.Fatalf("tshark: %v", err)
	}
	tsharkStreams := 0
	for l := range strings.SplitSeq(string(out), "\n") {
		if strings.Contains(l, "0x") && (strings.Contains(l, "g711") || strings.Contains(l, "telephone-event")) {
			tsharkStreams++
		}
	}
	l := load(t, path)
	sn := l.media.Snapshot(false)
	for i, band := range Bands() {
		rd := l.box().Read(Rule{Kind: KindMOSShare, Band: band, Window: time.Hour}, time.Now())
		if !rd.OK || rd.Population != int(rd.Evidence.Figures["scored"]) || int(rd.Evidence.Figures["streams"]) != tsharkStreams {
			t.Fatalf("%s: %+v; tshark lists %d streams", band, rd, tsharkStreams)
		}
		maxMOS, err := strconv.ParseFloat(rd.Evidence.Args["max_mos"], 64)
		if err != nil {
			t.Fatal(err)
		}
		shown := 0
		for _, s := range sn.Streams {
			if (rtp.StreamFilter{MaxMOS: &maxMOS}).Match(s) {
				shown++
			}
		}
		in := rd.Evidence.Figures["in_band_or_worse"]
		if float64(shown) != in || !near(rd.Value, in/float64(rd.Population)) {
			t.Errorf("%s: rtp_streams max_mos %v shows %d streams, the rule counted %v of %d", band, maxMOS, shown, in, rd.Population)
		}
		if i == 0 && rd.Value != 1 {
			t.Errorf("every scored stream is in the best band or worse: %v", rd.Value)
		}
		t.Logf("%s or worse: %v of %d scored (%d streams)", band, in, rd.Population, tsharkStreams)
	}
}

// TestRegFailuresCountAsSIPRegistrations: sipgen's registration scenario
// (sipgen.Registrations) read in two parts, the engine ticking after
// each: the rule's value is the failures of the second part. tshark's
// REGISTER transactions (Call-ID and CSeq) give the truth: a transaction
// ending 3xx-6xx other than a 401/407 challenge, or never answered, is a
// failure; a challenge answered by a retry is not.
func TestRegFailuresCountAsSIPRegistrations(t *testing.T) {
	start := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	path := filepath.Join(t.TempDir(), "registrations.pcapng")
	var buf bytes.Buffer
	if err := sipgen.WriteRegistrationsPcapng(&buf, start); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	const cut = 30 // seconds into the capture: the first part
	type txn struct {
		at    float64 // the final answer's time, else the request's
		final int
	}
	txns := map[string]*txn{}
	for _, r := range tsharkSIP(t, path) {
		if r.cseqMethod != "REGISTER" {
			continue
		}
		k := r.callID + "/" + strconv.Itoa(r.cseq)
		x := txns[k]
		if x == nil {
			x = &txn{at: r.at}
			txns[k] = x
		}
		if r.status >= 200 && x.final == 0 {
			x.final, x.at = r.status, r.at
		}
	}
	var before, after int
	for _, x := range txns {
		failed := x.final >= 300 && x.final != 401 && x.final != 407 || x.final == 0
		switch {
		case !failed:
		case x.at-float64(start.Unix()) < cut:
			before++
		default:
			after++
		}
	}
	pkts, err := sipgen.Registrations(start)
	if err != nil {
		t.Fatal(err)
	}
	l := newLoaded(t)
	r := Rule{Name: "reg", Kind: KindRegFailures, AoR: "@pbx.example.com", Op: Above, Value: 1, Window: time.Minute, Severity: "warning"}
	e, err := New([]Rule{r}, l.box())
	if err != nil {
		t.Fatal(err)
	}
	i := 0
	for ; i < len(pkts) && pkts[i].Time.Before(start.Add(cut*time.Second)); i++ {
		l.sa.Feed(pkts[i].Time, wire.LinkEthernet, pkts[i].Data)
	}
	e.Tick(t0)
	if v := e.Verdicts()[0]; v.State != StateNoData || v.Evidence.Figures["refused"]+v.Evidence.Figures["no_answer"] != float64(before) {
		t.Errorf("after the first part: %+v, want no_data with %d failures so far (tshark)", v, before)
	}
	for ; i < len(pkts); i++ {
		l.sa.Feed(pkts[i].Time, wire.LinkEthernet, pkts[i].Data)
	}
	e.Tick(t0.Add(5 * time.Second))
	v := e.Verdicts()[0]
	if v.State != StateFiring || v.Value != float64(after) || v.Evidence.Tool != "sip_registrations" || v.Evidence.Args["aor"] != "@pbx.example.com" {
		t.Errorf("after the second part: %+v, want firing at %d failures (tshark)", v, after)
	}
	t.Logf("failures: %d in the first %d s, %d after (tshark); evidence %v", before, cut, after, v.Evidence.Figures)
	// The trunk's AoR is on another domain: challenged and registered
	// every time, it never failed.
	if rd := l.box().Read(Rule{Kind: KindRegFailures, AoR: "sip.provider.example"}, t0); !rd.OK || rd.Value != 0 || rd.Evidence.Figures["aors"] != 1 {
		t.Errorf("trunk: %+v", rd)
	}
}

// TestSecurityFindingsInWindow: the SIPp load run sends 1334 REGISTERs
// and 1334 INVITEs from one address in 133 s (tshark), past the default
// 60 REGISTERs and 120 INVITEs a minute: sip_security counts the floods
// sip_security_findings finds, per kind when the rule names one, over a
// window ending at the capture's last message; no scanner User-Agent is
// there, so that kind reads 0.
func TestSecurityFindingsInWindow(t *testing.T) {
	path := refdata.File(t, "sip", "branch-scenario-sipp.pcapng")
	rows := tsharkSIP(t, path)
	peak := map[string]int{}
	var times = map[string][]float64{}
	for _, r := range rows {
		if r.method == "REGISTER" || r.method == "INVITE" {
			times[r.method] = append(times[r.method], r.at)
		}
	}
	for m, ts := range times {
		slices.Sort(ts)
		lo := 0
		for hi := range ts {
			for ts[hi]-ts[lo] >= 60 {
				lo++
			}
			peak[m] = max(peak[m], hi-lo+1)
		}
	}
	if peak["REGISTER"] < sipsecurity.Defaults.Registers || peak["INVITE"] < sipsecurity.Defaults.Invites {
		t.Fatalf("tshark's peaks per minute %v do not pass the default thresholds", peak)
	}
	l := load(t, path)
	rep := sipsecurity.Analyse(l.st.Snapshot().Dialogs, sipsecurity.Defaults)
	n := map[string]int{}
	for _, f := range rep.Findings {
		n[f.Kind]++
	}
	for _, c := range []struct {
		finding string
		want    int
	}{
		{"", len(rep.Findings)},
		{sipsecurity.KindRegisterFlood, n[sipsecurity.KindRegisterFlood]},
		{sipsecurity.KindInviteFlood, n[sipsecurity.KindInviteFlood]},
		{sipsecurity.KindScanner, 0},
	} {
		rd := l.box().Read(Rule{Kind: KindSIPSecurity, Finding: c.finding, Window: time.Hour}, time.Now())
		if !rd.OK || rd.Value != float64(c.want) || rd.Population != 1334 || rd.Evidence.Tool != "sip_security_findings" {
			t.Errorf("finding %q: %+v, want %d over 1334 dialogs", c.finding, rd, c.want)
		}
	}
	if n[sipsecurity.KindRegisterFlood] == 0 || n[sipsecurity.KindInviteFlood] == 0 {
		t.Errorf("findings %v: want both floods (tshark's peaks per minute %v)", n, peak)
	}
	t.Logf("tshark peaks per minute %v; findings %v", peak, n)
}

// TestSecurityAnalysisFollowsTheStore: the analysis a sip_security rule
// reads is kept with the store's view (sipsecurity.AnalyseView): before
// the SIPp run's floods reach the thresholds no finding is counted, and
// once the rest of the capture is in, the same box counts what a box
// given a fresh view (nothing kept) at every read counts.
func TestSecurityAnalysisFollowsTheStore(t *testing.T) {
	path := refdata.File(t, "sip", "branch-scenario-sipp.pcapng")
	l := newLoaded(t)
	var rest []pcapfile.Record
	n := 0
	refdata.EachRecord(t, path, func(rec pcapfile.Record) {
		if n++; n <= 40 {
			l.sa.Feed(rec.Time, rec.Link, rec.Data)
			return
		}
		rec.Data = slices.Clone(rec.Data)
		rest = append(rest, rec)
	})
	box := l.box()
	rule := Rule{Kind: KindSIPSecurity, Window: time.Hour}
	if rd := box.Read(rule, time.Now()); !rd.OK || rd.Value != 0 {
		t.Fatalf("after 40 frames: %+v, want no finding", rd)
	}
	for _, rec := range rest {
		l.sa.Feed(rec.Time, rec.Link, rec.Data)
	}
	fresh := l.box()
	fresh.SIP = freshViews{fresh.SIP}
	got, want := box.Read(rule, time.Now()), fresh.Read(rule, time.Now())
	if !got.OK || got.Value < 2 || got.Value != want.Value || got.Evidence.Figures["findings"] != want.Evidence.Figures["findings"] {
		t.Errorf("after the whole capture: %+v from the kept analysis, %+v from a fresh view; want the floods, the same", got, want)
	}
	if again := box.Read(rule, time.Now()); again.Value != got.Value {
		t.Errorf("read again of the same view: %v, want %v", again.Value, got.Value)
	}
}

// freshViews gives a new view of the store's dialogs at every call,
// which keeps no derived answer.
type freshViews struct{ SIPStore }

func (f freshViews) Snapshot() *sip.Snapshot {
	sn := f.SIPStore.Snapshot()
	return &sip.Snapshot{Dialogs: sn.Dialogs, Revision: sn.Revision, Stats: sn.Stats}
}
