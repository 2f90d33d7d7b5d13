package metrics

import (
	"strings"
	"testing"
	"time"

	"fieldtap/services/ports"
	"fieldtap/services/rules"
)

// ruleEngine is an engine with a silent port firing, a bus load rule
// ok and a disk rule without a recorder (no_data), after one tick.
func ruleEngine(t *testing.T, s Sources) *rules.Engine {
	t.Helper()
	rs := []rules.Rule{
		{Name: "span-silent", Kind: rules.KindPortSilent, Port: "span0", Op: rules.Above, Value: 0, Window: time.Minute, Severity: "critical"},
		{Name: "can0-load", Kind: rules.KindBusLoad, Port: "can0", Op: rules.Above, Value: 0.5, Window: time.Minute, Severity: "warning"},
		{Name: "disk", Kind: rules.KindDiskFree, Op: rules.Below, Value: 1e9, Window: time.Minute, Severity: "info"},
	}
	e, err := rules.New(rs, rules.Box{Ports: s.Ports, CAN: s.CAN})
	if err != nil {
		t.Fatal(err)
	}
	e.Tick(s.Now())
	return e
}

// TestRuleSeries checks every configured rule is exported from the
// first scrape: state 0 or 1 with its severity, transitions from 0, and
// a value only when the rule has one.
func TestRuleSeries(t *testing.T) {
	s := sources(t)
	s.Ports = fakePorts{st: append(s.Ports.Snapshot(), ports.Status{Name: "span0", Kind: "ethernet", Live: true, State: ports.StateSilent})}
	s.Rules = ruleEngine(t, s)
	exp := scrape(t, s)
	for _, want := range []string{
		`fieldtap_rule_state{rule="span-silent",severity="critical"} 1`,
		`fieldtap_rule_state{rule="can0-load",severity="warning"} 0`,
		`fieldtap_rule_state{rule="disk",severity="info"} 0`,
		`fieldtap_rule_value{rule="span-silent"} 1`,
		// 10 frames of 29-bit id and 8 bytes in a second at 250 kbit/s.
		`fieldtap_rule_value{rule="can0-load"} 0.0`,
		`fieldtap_rule_transitions_total{rule="span-silent"} 1`,
		`fieldtap_rule_transitions_total{rule="can0-load"} 1`,
		`fieldtap_rule_transitions_total{rule="disk"} 0`,
	} {
		if !strings.Contains(string(exp), want) {
			t.Errorf("lacks %q", want)
		}
	}
	if strings.Contains(string(exp), `fieldtap_rule_value{rule="disk"}`) {
		t.Error("a rule without data has a value")
	}
	if t.Failed() {
		t.Logf("exported:\n%s", exp)
	}
}
