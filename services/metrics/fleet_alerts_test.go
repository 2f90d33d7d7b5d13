package metrics

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestFleetAlertRules checks docs/fleet-alerts.yml, the alert rules
// scripts/fleet.sh loads into the fleet's Prometheus: every fieldtap_
// series an expression reads is one this endpoint exports, so no rule
// waits on a name the box never writes; promtool accepts the file; and
// promtool's rule tests (testdata/fleet-alerts.test.yml) see every alert
// fire on a box in trouble, with its labels and rendered summary, and
// stay quiet before.
func TestFleetAlertRules(t *testing.T) {
	path := filepath.Join("..", "..", "docs", "fleet-alerts.yml")
	rules, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := sources(t)
	s.Rules = ruleEngine(t, s)
	body := scrape(t, s)
	var exported []string
	for _, m := range regexp.MustCompile(`(?m)^# TYPE (fieldtap_\w+) `).FindAllSubmatch(body, -1) {
		exported = append(exported, string(m[1]))
	}
	read := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^\s*expr: (.*)$`).FindAllSubmatch(rules, -1) {
		for _, name := range regexp.MustCompile(`fieldtap_\w+`).FindAll(m[1], -1) {
			read[string(name)] = true
		}
	}
	if len(read) == 0 {
		t.Fatalf("%s: no expression reads a fieldtap_ series", path)
	}
	for name := range read {
		if !slices.Contains(exported, name) {
			t.Errorf("%s reads %s, which /metrics does not export (it exports %s)", path, name, strings.Join(exported, " "))
		}
	}
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool not installed (Debian package prometheus; .ci/run installs it)")
	}
	if out, err := exec.Command(promtool, "check", "rules", path).CombinedOutput(); err != nil {
		t.Fatalf("promtool check rules %s: %v\n%s", path, err, out)
	}
	unit := filepath.Join("testdata", "fleet-alerts.test.yml")
	tests, err := os.ReadFile(unit)
	if err != nil {
		t.Fatal(err)
	}
	alerts := regexp.MustCompile(`(?m)^\s*- alert: (\w+)$`).FindAllSubmatch(rules, -1)
	for _, a := range alerts {
		if !strings.Contains(string(tests), "alertname: "+string(a[1])+"\n        exp_alerts:") {
			t.Errorf("%s: alert %s is not seen firing in %s", path, a[1], unit)
		}
	}
	if out, err := exec.Command(promtool, "test", "rules", unit).CombinedOutput(); err != nil {
		t.Fatalf("promtool test rules %s: %v\n%s", unit, err, out)
	}
	t.Logf("%s: %d fieldtap_ series read, all exported; promtool accepts it and sees its %d alerts fire", path, len(read), len(alerts))
}
