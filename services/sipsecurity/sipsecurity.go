package sipsecurity

import (
	"cmp"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

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
)

// Thresholds decide what is an attack. Rates are counted in a sliding
// Window per source address; a source reaching a threshold is a finding.
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

// Finding is one source doing one kind of thing past its threshold.
type Finding struct {
	Kind      string
	Source    netip.Addr
	Count     int // the most events in one Window (scanner: dialogs)
	Threshold int
	First     time.Time // the window where Count was reached
	Last      time.Time
	Evidence  []Evidence
	More      int // evidence rows past MaxEvidence
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

type event struct {
	t   time.Time
	key string // the OPTIONS target, else ""
	ev  Evidence
}

// Analyse looks at every kept transaction of ds.
func Analyse(ds []*sip.Dialog, th Thresholds) Report {
	var r Report
	type srcKind struct {
		src  netip.Addr
		kind string
	}
	events := map[srcKind][]event{}
	scanners := map[netip.Addr][]Evidence{}
	for _, d := range ds {
		r.Dialogs++
		r.TxnsShed += d.TxnsShed
		if ua, ok := scannerAgent(d.UserAgents, th.ScannerAgents); ok {
			src := d.Src.Addr().Unmap()
			scanners[src] = append(scanners[src], Evidence{CallID: d.CallID, Time: d.Created, Method: d.FirstMethod, Dst: d.Dst, FinalCode: d.FinalCode, UserAgent: ua})
		}
		for i := range d.Txns {
			tx := &d.Txns[i]
			src := tx.Src.Addr().Unmap()
			e := event{t: tx.Start, ev: Evidence{CallID: d.CallID, Time: tx.Start, Method: tx.Method, Dst: tx.Dst, FinalCode: tx.FinalCode}}
			switch {
			case tx.Method == "REGISTER":
				events[srcKind{src, KindRegisterFlood}] = append(events[srcKind{src, KindRegisterFlood}], e)
			case tx.Method == "INVITE" && !tx.InDialog:
				events[srcKind{src, KindInviteFlood}] = append(events[srcKind{src, KindInviteFlood}], e)
			case tx.Method == "OPTIONS":
				e.key = tx.Dst.Addr().Unmap().String() + " " + d.ToUser
				events[srcKind{src, KindOptionsSweep}] = append(events[srcKind{src, KindOptionsSweep}], e)
			}
			if tx.FinalCode == 401 || tx.FinalCode == 407 {
				e.t = tx.FinalAt
				events[srcKind{src, KindAuthStorm}] = append(events[srcKind{src, KindAuthStorm}], e)
			}
		}
	}
	var out []Finding
	for sk, evs := range events {
		limit := map[string]int{KindRegisterFlood: th.Registers, KindInviteFlood: th.Invites, KindAuthStorm: th.AuthChallenges, KindOptionsSweep: th.OptionsTargets}[sk.kind]
		if f, ok := peak(evs, th.Window, limit, sk.kind == KindOptionsSweep); ok {
			f.Kind, f.Source = sk.kind, sk.src
			out = append(out, f)
		}
	}
	for src, evs := range scanners {
		f := Finding{Kind: KindScanner, Source: src, Count: len(evs), Threshold: 1, First: evs[0].Time, Last: evs[len(evs)-1].Time}
		f.Evidence, f.More = evs[:min(len(evs), MaxEvidence)], max(len(evs)-MaxEvidence, 0)
		out = append(out, f)
	}
	slices.SortFunc(out, func(a, b Finding) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Kind, b.Kind), a.Source.Compare(b.Source))
	})
	if len(out) > MaxFindings {
		r.FindingsLeft, out = len(out)-MaxFindings, out[:MaxFindings]
	}
	r.Findings = out
	return r
}

// peak finds the window of the most events (distinct keys when distinct)
// ending at an event: the events s with t-Window < s ≤ t.
func peak(evs []event, w time.Duration, limit int, distinct bool) (Finding, bool) {
	slices.SortStableFunc(evs, func(a, b event) int { return a.t.Compare(b.t) })
	best, bi, bj := 0, 0, 0
	j := 0
	keys := map[string]int{}
	for i, e := range evs {
		keys[e.key]++
		for e.t.Sub(evs[j].t) >= w {
			if keys[evs[j].key]--; keys[evs[j].key] == 0 {
				delete(keys, evs[j].key)
			}
			j++
		}
		n := i - j + 1
		if distinct {
			n = len(keys)
		}
		if n > best {
			best, bi, bj = n, i, j
		}
	}
	if best < limit {
		return Finding{}, false
	}
	win := evs[bj : bi+1]
	f := Finding{Count: best, Threshold: limit, First: win[0].t, Last: win[len(win)-1].t}
	for _, e := range win[:min(len(win), MaxEvidence)] {
		f.Evidence = append(f.Evidence, e.ev)
	}
	f.More = max(len(win)-MaxEvidence, 0)
	return f, true
}

// scannerAgent returns the first of uas containing one of known.
func scannerAgent(uas, known []string) (string, bool) {
	for _, ua := range uas {
		l := strings.ToLower(ua)
		for _, k := range known {
			if strings.Contains(l, strings.ToLower(k)) {
				return ua, true
			}
		}
	}
	return "", false
}
