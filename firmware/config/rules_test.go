package config

import (
	"strings"
	"testing"
	"time"
)

func TestRulesParse(t *testing.T) {
	c, err := Parse("r.toml", []byte(`
[[rule]]
name = "span-silent"
kind = "port_silent"
port = "span0"
op = "above"
value = 0
for = "30s"
severity = "critical"
seal_evidence = true

[[rule]]
name = "oil"
kind = "dm1_active"
code = 100
fmi = 1
op = "above"
value = 0
severity = "critical"

[[rule]]
name = "disk"
kind = "disk_free"
op = "below"
value = 1e9
min_samples = 3
severity = "warning"
`))
	if err != nil {
		t.Fatal(err)
	}
	rs, err := c.Rules()
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 3 || rs[0].For != 30*time.Second || rs[0].Window != time.Minute || !rs[0].SealEvidence || rs[2].MinSamples != 3 || rs[2].Value != 1e9 ||
		rs[1].Code != 100 || rs[1].FMI == nil || *rs[1].FMI != 1 || rs[0].FMI != nil {
		t.Fatalf("rules %+v", rs)
	}
}

func TestRulesNameTheBadValue(t *testing.T) {
	for _, c := range []struct{ toml, want string }{
		{"[[rule]]\nname = \"a\"\nkind = \"disk_free\"\nop = \"below\"\nseverity = \"info\"\nwindow = \"soon\"\n", `rule 1: window "soon"`},
		{"[[rule]]\nname = \"a\"\nkind = \"disk_free\"\nop = \"below\"\nseverity = \"info\"\nfor = \"x\"\n", `rule 1: for "x"`},
		{"[[rule]]\nname = \"a\"\nkind = \"disk_free\"\nop = \"below\"\nseverity = \"info\"\nseal_evidence = true\n", "rule 1: seal_evidence seals recorded segments"},
		{"[[rule]]\nname = \"a\"\nkind = \"j1587_fault\"\ncode = 600\nop = \"above\"\nseverity = \"info\"\n", "code 600: want a PID"},
		{"[[rule]]\nname = \"a\"\nkind = \"asr\"\nop = \"below\"\nseverity = \"info\"\n", `kind "asr"`},
	} {
		cfg, err := Parse("r.toml", []byte("board = \"sim\"\n"+c.toml))
		if err != nil {
			t.Fatal(err)
		}
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.toml, err, c.want)
		}
	}
}
