package daemon

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"fieldtap/firmware/config"
	"fieldtap/services/evidence"
	"fieldtap/services/mqttpub"
	"fieldtap/services/rules"
)

// ruleTick is how often the rules are evaluated: often enough that a
// `for` of a few tens of seconds is kept to within one tick, rarely
// enough that 64 rules cost nothing measurable on the board.
const ruleTick = 5 * time.Second

// buildRules makes the engine of the [[rule]] tables, before the
// status page so /metrics exports every rule from its first scrape. With
// no rules there is none.
func (b *box) buildRules(context.Context) (func() error, error) {
	rs, err := b.cfg.Rules() // checked by Config.Validate
	if err != nil || len(rs) == 0 {
		return nil, err
	}
	src := rules.Box{Ports: &b.reg, CAN: b.an.can, J1939: b.an.j1939, J1587: b.an.j1587, SIP: b.an.sip, Media: b.an.media}
	// The configuration is checked, thresholds included; sip_security
	// rules count what sip_security_findings finds.
	src.SIPSecurity, _ = b.cfg.SIPSecurity.Thresholds()
	if b.rec.rec != nil {
		src.Recorder = b.rec.rec
	}
	b.rules, err = rules.New(rs, src)
	return nil, err
}

// watchRules evaluates the rules until the box stops, after the status
// page has started the MQTT publisher: every rule's retained state is
// published first, then each state change.
func (b *box) watchRules(ctx context.Context) (func() error, error) {
	if b.rules == nil {
		return nil, nil
	}
	if b.mqtt != nil {
		mqttpub.PublishRuleStates(b.mqtt, b.rules.Verdicts())
	}
	g := newGroup(ctx)
	g.wg.Go(func() {
		t := time.NewTicker(ruleTick)
		defer t.Stop()
		for {
			for _, tr := range b.rules.Tick(time.Now()) {
				b.ruleChanged(tr)
			}
			select {
			case <-g.ctx.Done():
				return
			case <-t.C:
			}
		}
	})
	return g.stop, nil
}

// ruleChanged logs tr, publishes it over MQTT and, for a rule with seal_evidence going to
// firing, asks for an evidence bundle around the moment.
func (b *box) ruleChanged(tr rules.Transition) {
	r := tr.Verdict.Rule
	level := slog.LevelInfo
	if tr.To == rules.StateFiring && r.Severity != "info" {
		level = slog.LevelWarn
	}
	b.log.Log(context.Background(), level, "rule changed state", "rule", r.Name, "severity", r.Severity,
		"from", tr.From, "to", tr.To, "value", tr.Verdict.Value, "why", tr.Verdict.Why)
	if b.mqtt != nil {
		mqttpub.PublishRuleChange(b.mqtt, tr)
	}
	if tr.To != rules.StateFiring || !r.SealEvidence || b.seal == nil || b.seal.builder == nil {
		return
	}
	raw, err := json.Marshal(ruleTrigger(tr))
	if err != nil {
		b.log.Error("rule evidence not requested", "rule", r.Name, "err", err)
		return
	}
	before := min(r.Window, config.MaxEvidenceWindow)
	after, _ := config.Trigger{}.Window("")
	p, err := b.seal.builder.Trigger(evidence.Request{Reason: "rule", At: tr.At, Before: before, After: after, Trigger: raw})
	if err != nil {
		b.log.Error("rule evidence not requested", "rule", r.Name, "err", err)
		return
	}
	b.log.Info("rule evidence requested", "rule", r.Name, "id", p.ID, "due", p.Due)
}

// ruleTrigger is the trigger.json of a rule's bundle: the rule, the
// change and its evidence.
func ruleTrigger(tr rules.Transition) map[string]any {
	v := tr.Verdict
	return map[string]any{
		"rule": v.Rule.Name, "kind": v.Rule.Kind, "port": v.Rule.Port, "op": v.Rule.Op, "threshold": v.Rule.Value,
		"window": v.Rule.Window.String(), "severity": v.Rule.Severity,
		"from": tr.From, "to": tr.To, "at": tr.At.UTC().Format(time.RFC3339Nano), "value": v.Value, "samples": v.Samples,
		"evidence": v.Evidence,
	}
}
