package siplint

import (
	"testing"

	"fieldtap/services/sipsecurity"
)

// The one table: ids unique, every field filled, each checker's rules
// present, and every sip_security_findings kind explained.
func TestRulesTable(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range Rules {
		if seen[r.ID] {
			t.Errorf("rule %s twice", r.ID)
		}
		seen[r.ID] = true
		if r.RFC == "" || r.Section == "" || r.Summary == "" || r.Fix == "" {
			t.Errorf("rule %s lacks a field: %+v", r.ID, r)
		}
		switch r.Severity {
		case SevError, SevWarning, SevInfo:
		default:
			t.Errorf("rule %s: severity %q", r.ID, r.Severity)
		}
	}
	for checker, want := range map[string]int{ByLint: 5, ByValidate: 11, BySecurity: 5} {
		if got := len(rulesOf(checker)); got != want {
			t.Errorf("%s has %d rules, want %d", checker, got, want)
		}
	}
	for _, kind := range []string{sipsecurity.KindScanner, sipsecurity.KindRegisterFlood, sipsecurity.KindAuthStorm, sipsecurity.KindInviteFlood, sipsecurity.KindOptionsSweep} {
		if r, ok := RuleByID(kind); !ok || r.Checker != BySecurity {
			t.Errorf("security kind %s has no rule", kind)
		}
	}
}
