package sip

import (
	"fmt"
	"sort"

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
	"failed":     "final_code >= 400",
	"slow-setup": fmt.Sprintf("pdd_ms > %d", SlowSetupPDDms),
	"short-calls": fmt.Sprintf("first_method == INVITE and final_code >= 200 and final_code < 300 and duration_ms < %d",
		ShortCallMs),
	"retransmits": fmt.Sprintf("retransmits > %d", RetransmitsOver),
	"no-ack":      "first_method == INVITE and final_code >= 200 and final_code < 300 and not has_ack",
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

// MatchProblems returns the aliases among names (a subset of
// ProblemNames, compiled by CompiledProblems) that d matches, in the order
// of names; never nil.
func MatchProblems(d *Dialog, compiled map[string]*filter.Expr, names []string) []string {
	hit := []string{}
	for _, n := range names {
		if compiled[n].Match(d) {
			hit = append(hit, n)
		}
	}
	return hit
}

// AnyProblem reports whether d matches one of names, without building
// the list: find_problems asks it of every dialog in the store.
func AnyProblem(d *Dialog, compiled map[string]*filter.Expr, names []string) bool {
	for _, n := range names {
		if compiled[n].Match(d) {
			return true
		}
	}
	return false
}
