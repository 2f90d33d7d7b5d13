package sipsecurity

import (
	"cmp"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

	"fieldtap/services/filter"
	"fieldtap/services/sip"
)

// Finding kinds.
const (
	KindScanner       = "scanner_user_agent"
	KindRegisterFlood = "register_flood"
	KindAuthStorm     = "digest_bruteforce"
	KindInviteFlood   = "invite_flood"
	KindOptionsSweep  = "options_sweep"
)

// Bounds of one report.
const (
	MaxFindings = 100 // findings listed, the largest first; the rest counted
	MaxEvidence = 10  // evidence rows per finding, oldest first; the rest counted
	MaxListed   = 10  // values per tally (sources, User-Agents, targets), most events first; the rest counted
)

// Thresholds decide what is an attack. Rates are counted in a sliding
// Window per source address; a source reaching a threshold is a finding.
// Window is also the quiet gap that ends an episode: a whole Window below
// the threshold.
type Thresholds struct {
	Window time.Duration
	// Registers: REGISTER transactions from one source in Window.
	Registers int
	// AuthChallenges: 401/407 answers to one source's requests in
	// Window: a client guessing passwords (one challenge per login is
	// normal).
	AuthChallenges int
	// Invites: out-of-dialog INVITE transactions from one source in Window.
	Invites int
	// OptionsTargets: distinct destination addresses or To users one
	// source sent OPTIONS to in Window (SIPVicious svmap's sweep).
	OptionsTargets int
	// ScannerAgents are User-Agent substrings (case-insensitive) of known
	// scanners.
	ScannerAgents []string
}

// Defaults: a phone re-registers every few minutes and dials a few calls a
// minute; a PBX trunk may send far more INVITEs, so operators of busy
// trunks raise Invites. The scanner list is the tools' own defaults
// (SIPVicious "friendly-scanner", sipcli, sundayddr, VaxSIPUserAgent as
// used by scanners, iWar, SIPScan, smap).
var Defaults = Thresholds{
	Window:         time.Minute,
	Registers:      60,
	AuthChallenges: 20,
	Invites:        120,
	OptionsTargets: 20,
	ScannerAgents:  []string{"friendly-scanner", "sipvicious", "sipcli", "sundayddr", "vaxsipuseragent", "iwar", "sipscan", "smap"},
}

// Check refuses thresholds that would find nothing or everything.
func (t Thresholds) Check() error {
	if t.Window < time.Second || t.Window > time.Hour {
		return fmt.Errorf("window %v: want 1s to 1h", t.Window)
	}
	for name, v := range map[string]int{"registers": t.Registers, "auth_challenges": t.AuthChallenges, "invites": t.Invites, "options_targets": t.OptionsTargets} {
		if v < 2 {
			return fmt.Errorf("%s %d: want at least 2 per window", name, v)
		}
	}
	return nil
}

// Evidence is one transaction behind a finding.
type Evidence struct {
	CallID    string
	Time      time.Time
	Method    string
	Dst       netip.AddrPort
	FinalCode int
	UserAgent string // sender text; set for scanner findings
}

// Target is where a finding's requests went: the destination and the
// To user (sender text). The store keeps one To user per dialog, its first
// request's, so User is empty for a later transaction of the dialog (a
// SIPp INVITE after its REGISTER) rather than another request's user.
type Target struct {
	Dst  netip.AddrPort
	User string
}

// Counted is one value of a tally and the events that carried it.
type Counted[V comparable] struct {
	Value  V
	Events int
}

// Tally is the distinct values of one attribute over an episode's events:
// the MaxListed carried by most events, and the rest counted.
type Tally[V comparable] struct {
	Top          []Counted[V]
	Others       int // distinct values past MaxListed
	OthersEvents int // the events that carried them
}

// Finding is one episode of one source doing one kind of thing past its
// threshold: from the first window that reached the threshold to the last,
// windows less than one Window apart merged. An episode ends once the
// source stays below the threshold for a whole Window; a later burst is a
// new finding with its own ID.
type Finding struct {
	// ID names the episode: kind/source/first time (RFC 3339). It stays
	// the same while the episode grows, as long as the store keeps its
	// first event.
	ID     string
	Kind   string
	Source netip.Addr
	First  time.Time // the episode's first event
	Last   time.Time // its last event
	// Total is the episode's events: transactions (REGISTER, INVITE,
	// OPTIONS), 401/407 answers (digest_bruteforce) or dialogs
	// (scanner_user_agent).
	Total int
	// Peak is the most events in one Window of the episode (distinct
	// targets for options_sweep), the window starting at PeakStart.
	Peak      int
	PeakStart time.Time
	Window    time.Duration
	Threshold int
	// Answered4xx counts the events whose final answer was 4xx.
	Answered4xx int
	// Sources are the source's address:port pairs.
	Sources Tally[netip.AddrPort]
	// UserAgents are the User-Agent and Server values (sender text) of
	// the events' dialogs.
	UserAgents Tally[string]
	Targets    Tally[Target]
	Evidence   []Evidence // the episode's first MaxEvidence events
	More       int        // evidence rows past MaxEvidence
}

// Report is every finding of a snapshot.
type Report struct {
	Findings     []Finding
	FindingsLeft int // findings past MaxFindings
	Dialogs      int // dialogs looked at
	// TxnsShed counts transactions the store did not keep (past the
	// per-dialog bound): rates may be undercounted by that much.
	TxnsShed int
}

// event is one transaction (tx -1: one scanner dialog) behind a finding:
// its dialog is row of the dialogs analysed, the transaction that
// dialog's Txns[tx]. What only some kinds want (an OPTIONS target, a
// scanner's User-Agent) is worked out for those groups' events alone,
// from the dialog: at 100,000 dialogs the events are most of what an
// analysis allocates.
type event struct {
	t       time.Time
	row, tx int32
}

// target is an OPTIONS event's target: the address and To user it asked.
func (e *event) target(ds []*sip.Dialog) string {
	d := ds[e.row]
	return d.Txns[e.tx].Dst.Addr().Unmap().String() + " " + d.ToUser
}

// rowEvent is an event as a dialog gives it (agents.events): its time,
// source and kind (an index of kinds), tx as event's; a dialog's shed
// transactions are one rowEvent of kindShed, tx their count. A snapshot
// keeps its dialogs' rowEvents in a column (sip.RowColumn), carried on to
// the next snapshot of a live store, so that an analysis reads only the
// dialogs changed since.
type rowEvent struct {
	t    time.Time
	src  netip.Addr
	tx   int32
	kind uint8
}

// kinds are the finding kinds by rowEvent.kind.
var kinds = [...]string{KindScanner, KindRegisterFlood, KindInviteFlood, KindOptionsSweep, KindAuthStorm}

const (
	kindScanner uint8 = iota
	kindRegister
	kindInvite
	kindOptions
	kindAuth
	kindShed
)

// events appends the rowEvents of d.
func (a *agents) events(d *sip.Dialog, out []rowEvent) []rowEvent {
	if d.TxnsShed > 0 {
		out = append(out, rowEvent{tx: int32(d.TxnsShed), kind: kindShed})
	}
	if _, ok := a.scanner(d.UserAgents); ok {
		out = append(out, rowEvent{t: d.Created, src: d.Src.Addr().Unmap(), tx: -1, kind: kindScanner})
	}
	for i := range d.Txns {
		tx := &d.Txns[i]
		e := rowEvent{t: tx.Start, src: tx.Src.Addr().Unmap(), tx: int32(i)}
		switch {
		case tx.Method == "REGISTER":
			e.kind = kindRegister
			out = append(out, e)
		case tx.Method == "INVITE" && !tx.InDialog:
			e.kind = kindInvite
			out = append(out, e)
		case tx.Method == "OPTIONS":
			e.kind = kindOptions
			out = append(out, e)
		}
		if tx.FinalCode == 401 || tx.FinalCode == 407 {
			e.t, e.kind = tx.FinalAt, kindAuth
			out = append(out, e)
		}
	}
	return out
}

// AnalyseView is Analyse of the dialogs of sn that e matches (nil or
// empty: every one), kept with sn by the filter and the thresholds
// (sip.Snapshot.Derived): every reader of one view's findings
// (sip_security_findings, generate_fail2ban_rule, timeline, the
// sip_security rules) shares one analysis, made again once the store
// changes, since a changed store gives a new view. Without a filter the
// dialogs' events come from the snapshot's event column, which a live
// store's next snapshot carries on.
func AnalyseView(sn *sip.Snapshot, e *filter.Expr, th Thresholds) Report {
	key := fmt.Sprintf("sipsecurity %q %+v", e.String(), th)
	return sn.Derived(key, func() any {
		scanners := newAgents(th.ScannerAgents)
		if e.MatchesAll() {
			col, ends, ok := sip.RowColumn(sn, fmt.Sprintf("sipsecurity events %q", scanners.known), scanners.events)
			if ok {
				return analyse(sn.Dialogs, col, ends, th, scanners)
			}
		}
		ds := sn.Dialogs
		if !e.MatchesAll() {
			ds = make([]*sip.Dialog, 0, len(sn.Dialogs))
			for _, d := range sn.Dialogs {
				if e.Match(d) {
					ds = append(ds, d)
				}
			}
		}
		return analyseDialogs(ds, th, scanners)
	}).(Report)
}

// Analyse looks at every kept transaction of ds.
func Analyse(ds []*sip.Dialog, th Thresholds) Report {
	return analyseDialogs(ds, th, newAgents(th.ScannerAgents))
}

func analyseDialogs(ds []*sip.Dialog, th Thresholds, scanners *agents) Report {
	var col []rowEvent
	ends := make([]int32, len(ds))
	for i, d := range ds {
		col = scanners.events(d, col)
		ends[i] = int32(len(col))
	}
	return analyse(ds, col, ends, th, scanners)
}

// analyse finds the episodes of the events col holds, ds[i]'s being
// col[ends[i-1]:ends[i]].
func analyse(ds []*sip.Dialog, col []rowEvent, ends []int32, th Thresholds, scanners *agents) Report {
	r := Report{Dialogs: len(ds)}
	type srcKind struct {
		src  netip.Addr
		kind uint8
	}
	// Every event with its source and kind's group, in one array, then
	// placed by group in a second: at 100,000 dialogs, growing a slice
	// per group was a third of the call.
	type grouped struct {
		g int32
		e event
	}
	all := make([]grouped, 0, len(col))
	index := map[srcKind]int32{}
	var groups []srcKind
	var counts []int
	// The last group found, asked before the map: a flood's events come
	// one after another from one source, and the map hashed each.
	last := int32(-1)
	row := int32(0)
	for i := range col {
		for int32(i) >= ends[row] {
			row++
		}
		re := &col[i]
		if re.kind == kindShed {
			r.TxnsShed += int(re.tx)
			continue
		}
		sk := srcKind{re.src, re.kind}
		g := last
		if g < 0 || groups[g] != sk {
			var ok bool
			if g, ok = index[sk]; !ok {
				g = int32(len(groups))
				index[sk], groups, counts = g, append(groups, sk), append(counts, 0)
			}
			last = g
		}
		counts[g]++
		all = append(all, grouped{g, event{t: re.t, row: row, tx: re.tx}})
	}
	starts := make([]int, len(groups)+1)
	for g, n := range counts {
		starts[g+1] = starts[g] + n
	}
	placed, next := make([]event, len(all)), slices.Clone(starts[:len(groups)])
	for _, ge := range all {
		placed[next[ge.g]] = ge.e
		next[ge.g]++
	}
	all = nil // for the collector, while the episodes are found
	byTime := func(a, b event) int { return a.t.Compare(b.t) }
	var out []Finding
	for g, sk := range groups {
		evs := placed[starts[g]:starts[g+1]]
		kind := kinds[sk.kind]
		limit := map[string]int{KindRegisterFlood: th.Registers, KindInviteFlood: th.Invites, KindAuthStorm: th.AuthChallenges, KindOptionsSweep: th.OptionsTargets, KindScanner: 1}[kind]
		if !slices.IsSortedFunc(evs, byTime) { // most sources' events come in order
			slices.SortStableFunc(evs, byTime)
		}
		var keys []string // distinct targets count for a sweep
		if kind == KindOptionsSweep {
			keys = make([]string, len(evs))
			for i := range evs {
				keys[i] = evs[i].target(ds)
			}
		}
		for _, ep := range episodes(evs, keys, th.Window, limit) {
			f := summarise(ds, evs[ep.lo:ep.hi+1], kind == KindScanner, scanners)
			f.Kind, f.Source, f.Window, f.Threshold = kind, sk.src, th.Window, limit
			f.Peak, f.PeakStart = ep.peak, evs[ep.peakLo].t
			f.ID = FindingID(kind, sk.src, f.First)
			out = append(out, f)
		}
	}
	slices.SortFunc(out, func(a, b Finding) int {
		return cmp.Or(cmp.Compare(b.Total, a.Total), cmp.Compare(a.Kind, b.Kind), a.Source.Compare(b.Source), a.First.Compare(b.First))
	})
	if len(out) > MaxFindings {
		r.FindingsLeft, out = len(out)-MaxFindings, out[:MaxFindings]
	}
	r.Findings = out
	return r
}

// FindingID names an episode; generate_fail2ban_rule takes it back.
func FindingID(kind string, src netip.Addr, first time.Time) string {
	return kind + "/" + src.String() + "/" + first.UTC().Format(time.RFC3339Nano)
}

// span is one episode: events lo..hi, its peak window starting at peakLo.
type span struct{ lo, hi, peak, peakLo int }

// episodes finds the hot windows of evs (sorted by time): each window of
// length w ending at an event, the events s with t-w < s ≤ t, that holds
// at least limit events (distinct keys, with keys: the events' own, in
// their order). Hot windows that overlap or are less than w apart are
// one episode: the source never stayed below the threshold for a whole
// window in between.
func episodes(evs []event, keys []string, w time.Duration, limit int) []span {
	var out []span
	cur := span{lo: -1}
	j := 0
	inWindow := map[string]int{}
	for i, e := range evs {
		if keys != nil {
			inWindow[keys[i]]++
		}
		for e.t.Sub(evs[j].t) >= w {
			if keys != nil {
				if inWindow[keys[j]]--; inWindow[keys[j]] == 0 {
					delete(inWindow, keys[j])
				}
			}
			j++
		}
		n := i - j + 1
		if keys != nil {
			n = len(inWindow)
		}
		if n < limit {
			continue
		}
		if cur.lo >= 0 && (j <= cur.hi || evs[j].t.Sub(evs[cur.hi].t) < w) {
			cur.hi = i
		} else {
			if cur.lo >= 0 {
				out = append(out, cur)
			}
			cur = span{lo: j, hi: i}
		}
		if n > cur.peak {
			cur.peak, cur.peakLo = n, j
		}
	}
	if cur.lo >= 0 {
		out = append(out, cur)
	}
	return out
}

// summarise totals one episode's events; a scanner's names the
// User-Agent of known that made each a scanner event.
func summarise(ds []*sip.Dialog, evs []event, scanner bool, known *agents) Finding {
	f := Finding{First: evs[0].t, Last: evs[len(evs)-1].t, Total: len(evs)}
	var srcs tallier[netip.AddrPort]
	var uas tallier[string]
	var tgts tallier[Target]
	for _, e := range evs {
		d := ds[e.row]
		ev := Evidence{CallID: d.CallID, Time: e.t}
		if scanner {
			ev.UserAgent, _ = known.scanner(d.UserAgents)
		}
		src, tgt := d.Src, Target{d.Dst, d.ToUser}
		if e.tx >= 0 {
			tx := &d.Txns[e.tx]
			ev.Method, ev.Dst, ev.FinalCode = tx.Method, tx.Dst, tx.FinalCode
			src, tgt.Dst = tx.Src, tx.Dst
			if e.tx > 0 { // a later transaction: the dialog's To user is not its
				tgt.User = ""
			}
		} else {
			ev.Method, ev.Dst, ev.FinalCode = d.FirstMethod, d.Dst, d.FinalCode
		}
		if ev.FinalCode >= 400 && ev.FinalCode < 500 {
			f.Answered4xx++
		}
		srcs.add(src)
		tgts.add(tgt)
		if scanner {
			uas.add(ev.UserAgent)
		} else {
			for _, ua := range d.UserAgents {
				uas.add(ua)
			}
		}
		if len(f.Evidence) < MaxEvidence {
			f.Evidence = append(f.Evidence, ev)
		}
	}
	f.More = f.Total - len(f.Evidence)
	f.Sources, f.UserAgents, f.Targets = srcs.tally(), uas.tally(), tgts.tally()
	return f
}

// tallier counts events per value. Its size is bounded by the episode's
// events, which the store bounds. A run of one value (a flood's source,
// its target) is counted apart and added to the map when it ends: the
// map hashed every event.
type tallier[V comparable] struct {
	m    map[V]int
	last V
	run  int // events of last not yet in m
}

func (t *tallier[V]) add(v V) {
	if t.run > 0 && v == t.last {
		t.run++
		return
	}
	t.flush()
	t.last, t.run = v, 1
}

func (t *tallier[V]) flush() {
	if t.run > 0 {
		if t.m == nil {
			t.m = map[V]int{}
		}
		t.m[t.last] += t.run
		t.run = 0
	}
}

// tally keeps the MaxListed values of most events (ties by value text, so
// that map order never shows) and counts the rest.
func (t *tallier[V]) tally() Tally[V] {
	t.flush()
	type keyed struct {
		c   Counted[V]
		key string
	}
	all := make([]keyed, 0, len(t.m))
	for v, n := range t.m {
		all = append(all, keyed{Counted[V]{v, n}, fmt.Sprint(v)})
	}
	slices.SortFunc(all, func(a, b keyed) int {
		return cmp.Or(cmp.Compare(b.c.Events, a.c.Events), strings.Compare(a.key, b.key))
	})
	out := Tally[V]{Top: make([]Counted[V], 0, min(len(all), MaxListed))}
	for i, k := range all {
		if i < MaxListed {
			out.Top = append(out.Top, k.c)
			continue
		}
		out.Others++
		out.OthersEvents += k.c.Events
	}
	return out
}

// agents tells which User-Agent values hold one of the known scanner
// names. A site's dialogs share a handful of User-Agent values (the store
// keeps one copy of each), so each distinct value is lowercased and
// searched once an analysis and its answer remembered: lowercasing every
// dialog's values was more than half of an analysis whose dialogs
// carry one (BenchmarkAnalyseUserAgents).
type agents struct {
	known []string // lowercased
	seen  map[string]bool
	// last is the value asked last and its answer, asked before the
	// map: consecutive dialogs mostly share one copy of a value.
	last   string
	lastIs bool
}

// maxAgentsSeen bounds the answers an analysis remembers; past it, values
// are searched each time (a flood of distinct User-Agents).
const maxAgentsSeen = 4096

func newAgents(known []string) *agents {
	a := &agents{known: make([]string, len(known)), seen: map[string]bool{}}
	for i, k := range known {
		a.known[i] = strings.ToLower(k)
	}
	return a
}

// scanner returns the first of uas containing one of the known names.
func (a *agents) scanner(uas []string) (string, bool) {
	for _, ua := range uas {
		if a.is(ua) {
			return ua, true
		}
	}
	return "", false
}

func (a *agents) is(ua string) bool {
	if ua == a.last && ua != "" {
		return a.lastIs
	}
	v, ok := a.seen[ua]
	if !ok {
		l := strings.ToLower(ua)
		v = slices.ContainsFunc(a.known, func(k string) bool { return strings.Contains(l, k) })
		if len(a.seen) < maxAgentsSeen {
			a.seen[ua] = v
		}
	}
	a.last, a.lastIs = ua, v
	return v
}
