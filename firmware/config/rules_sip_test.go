package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSIPRulesParse(t *testing.T) {
	c, err := Parse("r.toml", []byte(`
[[rule]]
name = "trunk-asr"
kind = "sip_asr"
group = "dst_ip"
key = "198.51.100.1"
op = "below"
value = 0.3
window = "15m"
min_samples = 20
severity = "critical"

[[rule]]
name = "pdd"
kind = "sip_pdd"
op = "above"
value = 4
severity = "warning"

[[rule]]
name = "poor-media"
kind = "mos_share"
band = "many dissatisfied"
op = "above"
value = 0.1
severity = "warning"

[[rule]]
name = "reg"
kind = "sip_reg_failures"
aor = "@pbx.example.com"
op = "above"
value = 5
severity = "warning"

[[rule]]
name = "scan"
kind = "sip_security"
finding = "scanner_user_agent"
op = "above"
value = 0
severity = "critical"
`))
	if err != nil {
		t.Fatal(err)
	}
	rs, err := c.Rules()
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 5 || rs[0].Group != "dst_ip" || rs[0].Key != "198.51.100.1" || rs[0].MinSamples != 20 || rs[1].Percentile != DefaultPDDPercentile ||
		rs[0].Percentile != 0 || rs[2].Band != "many dissatisfied" || rs[3].AoR != "@pbx.example.com" || rs[4].Finding != "scanner_user_agent" {
		t.Fatalf("rules %+v", rs)
	}
}

func TestSIPRulesNameTheBadValue(t *testing.T) {
	for _, c := range []struct{ toml, want string }{
		{"kind = \"sip_ner\"\ngroup = \"trunk\"\nkey = \"x\"\n", `group "trunk": want one of`},
		{"kind = \"sip_ner\"\ngroup = \"dst_ip\"\n", "group dst_ip needs a key"},
		{"kind = \"sip_pdd\"\npercentile = 99\n", "percentile 99: want one of [50 95]"},
		{"kind = \"mos_share\"\nband = \"poor\"\n", `band "poor": want one of`},
		{"kind = \"mos_share\"\n", `band "": want one of`},
		{"kind = \"sip_security\"\nfinding = \"ddos\"\n", `finding "ddos": want one of`},
		{"kind = \"sip_asr\"\nvalue = 80\n", "value 80: kind sip_asr is a ratio"},
		{"kind = \"disk_free\"\naor = \"1001\"\n", "kind disk_free takes no aor"},
	} {
		cfg, err := Parse("r.toml", []byte("board = \"sim\"\n[[rule]]\nname = \"a\"\nop = \"above\"\nseverity = \"info\"\n"+c.toml))
		if err != nil {
			t.Fatal(err)
		}
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), `rule "a"`) {
			t.Errorf("%q: %v, want %q", c.toml, err, c.want)
		}
	}
}

// TestRulesDocExamplesLoad: every TOML block of docs/rules.md is a
// configuration the box accepts (the commented keys apart).
func TestRulesDocExamplesLoad(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "rules.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := strings.Split(string(b), "```toml\n")[1:]
	if len(blocks) < 2 {
		t.Fatalf("%d TOML blocks in docs/rules.md", len(blocks))
	}
	for i, blk := range blocks {
		body, _, _ := strings.Cut(blk, "```")
		// seal_evidence needs the recorder: give it one.
		cfg, err := Parse("rules.md", []byte("board = \"sim\"\n[recorder]\nenabled = true\ndir = \"/tmp/rec\"\n"+body))
		if err != nil {
			t.Fatalf("block %d: %v", i+1, err)
		}
		if err := cfg.Validate(); err != nil {
			t.Errorf("block %d: %v\n%s", i+1, err, body)
		}
	}
}
