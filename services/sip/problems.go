package sip

import (
	"fmt"
	"slices"
	"sort"
	"sync"
	"sync/atomic"

	"fieldtap/services/filter"
)

// Problem thresholds (docs/sip.md). Each alias is a filter in the same
// language agents use, so find_problems and list_dialogs agree.
const (
	// SlowSetupPDDms: ITU-T E.721 targets a mean PDD of 3 s (local) to
	// 8 s (international); 5 s flags the slow end of national calls.
	SlowSetupPDDms = 5000
	// ShortCallMs: an answered call shorter than this usually means a
	// one-way-audio or wrong-party hang-up.
	ShortCallMs = 5000
	// RetransmitsOver: more than this many repeats means a peer is not
	// answering or not receiving.
	RetransmitsOver = 3
	// AuthLoopChallenges: a third 401/407 in one dialog means wrong
	// credentials being retried, not the normal single challenge.
	AuthLoopChallenges = 3
)

// Problems maps an alias to its filter source.
var Problems = map[string]string{
	// A cancelled call (CANCEL, then 487) ended at the caller, not in
	// the network: not a failure (ITU-T E.425).
	"failed":     "final_code >= 400 and state != cancelled",
	"slow-setup": fmt.Sprintf("pdd_ms > %d", SlowSetupPDDms),
	"short-calls": fmt.Sprintf("method == INVITE and final_code >= 200 and final_code < 300 and duration_ms < %d",
		ShortCallMs),
	"retransmits": fmt.Sprintf("retransmits > %d", RetransmitsOver),
	"no-ack":      "method == INVITE and final_code >= 200 and final_code < 300 and not has_ack",
	"auth-loop":   fmt.Sprintf("auth_challenges >= %d", AuthLoopChallenges),
}

// ProblemNames lists the aliases in a stable order.
func ProblemNames() []string {
	var n []string
	for k := range Problems {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}

// CompiledProblems compiles every alias; an error is a programming error
// caught by the package's tests.
func CompiledProblems() map[string]*filter.Expr {
	out := map[string]*filter.Expr{}
	for k, src := range Problems {
		e, err := Compile(src)
		if err != nil {
			panic("problem alias " + k + ": " + err.Error())
		}
		out[k] = e
	}
	return out
}

// problemOrder is ProblemNames: bit i of a dialog's problem set is
// problemOrder[i]. problemsKnown marks a computed set.
var (
	problemOrder    = ProblemNames()
	problemCompiled = sync.OnceValue(CompiledProblems)
)

const problemsKnown = 1 << 31

// problemSet is the set of aliases one of d's call attempts (or d
// itself, without an INVITE) matches, memoised on d (Dialog.problems).
func problemSet(d *Dialog) uint32 {
	if set := atomic.LoadUint32(&d.problems); set&problemsKnown != 0 {
		return set
	}
	compiled := problemCompiled()
	recs := Records(d)
	set := uint32(problemsKnown)
	for i, n := range problemOrder {
		for _, r := range recs {
			if compiled[n].Match(r) {
				set |= 1 << i
				break
			}
		}
	}
	atomic.StoreUint32(&d.problems, set)
	return set
}

// problemBit is name's bit in a problem set; 0 for a name that is not an
// alias.
func problemBit(name string) uint32 {
	if i, ok := slices.BinarySearch(problemOrder, name); ok {
		return 1 << i
	}
	return 0
}

// MatchProblems returns the aliases among names (a subset of
// ProblemNames) that one of d's call attempts (or d itself, without an
// INVITE) matches, in the order of names; never nil.
func MatchProblems(d *Dialog, names []string) []string {
	set := problemSet(d)
	hit := []string{}
	for _, n := range names {
		if set&problemBit(n) != 0 {
			hit = append(hit, n)
		}
	}
	return hit
}

// ProblemMask is the set of names (a subset of ProblemNames) that
// AnyProblem tests for.
func ProblemMask(names []string) uint32 {
	var m uint32
	for _, n := range names {
		m |= problemBit(n)
	}
	return m
}

// AnyProblem reports whether one of d's attempts matches one of the
// aliases in mask (ProblemMask), without building the list:
// find_problems asks it of every dialog, and after the first call it is
// a load of d's memo.
func AnyProblem(d *Dialog, mask uint32) bool { return problemSet(d)&mask != 0 }

// AttemptProblem is one call attempt and the aliases it matched.
type AttemptProblem struct {
	Attempt   int // Attempt.N
	FinalCode int
	Outcome   string // as TriageCall names it
	Problems  []string
}

// AttemptProblems lists d's call attempts that match one of names, each
// with its aliases; nil for a dialog without an INVITE.
func AttemptProblems(d *Dialog, compiled map[string]*filter.Expr, names []string) []AttemptProblem {
	var out []AttemptProblem
	for _, r := range Records(d) {
		ar, ok := r.(AttemptRecord)
		if !ok {
			return nil
		}
		var hit []string
		for _, n := range names {
			if compiled[n].Match(ar) {
				hit = append(hit, n)
			}
		}
		if hit != nil {
			out = append(out, AttemptProblem{Attempt: ar.A.N, FinalCode: ar.A.FinalCode, Outcome: outcome(true, ar.A.State), Problems: hit})
		}
	}
	return out
}
