package mqttpub

import (
	"encoding/json"
	"time"

	"fieldtap/services/rules"
)

// RuleState is the payload of rule/<name>/state (retained) and, with
// from, of rule/<name>/event (one per state change).
type RuleState struct {
	Rule      string         `json:"rule"`
	Kind      string         `json:"kind"`
	Port      string         `json:"port,omitempty"`
	Code      int            `json:"code,omitempty"` // the fault kinds' SPN or PID
	FMI       *int           `json:"fmi,omitempty"`
	Severity  string         `json:"severity"`
	State     string         `json:"state"`
	From      string         `json:"from,omitempty"`
	Since     time.Time      `json:"since"`
	Value     *float64       `json:"value"` // null while no_data
	Threshold float64        `json:"threshold"`
	Op        string         `json:"op"`
	Why       string         `json:"why,omitempty"`
	Evidence  rules.Evidence `json:"evidence"`
}

func ruleState(v rules.Verdict) RuleState {
	s := RuleState{Rule: v.Rule.Name, Kind: v.Rule.Kind, Port: v.Rule.Port, Code: v.Rule.Code, FMI: v.Rule.FMI, Severity: v.Rule.Severity, State: v.State,
		Since: v.Since.UTC(), Threshold: v.Rule.Value, Op: v.Rule.Op, Why: v.Why, Evidence: v.Evidence}
	if v.HasValue {
		s.Value = &v.Value
	}
	return s
}

// PublishRuleStates publishes every rule's retained state: at start, so
// a fleet reads each configured rule before its first change.
func PublishRuleStates(sink Sink, vs []rules.Verdict) {
	for _, v := range vs {
		if b, err := json.Marshal(ruleState(v)); err == nil {
			sink.Publish("rule/"+v.Rule.Name+"/state", b, true)
		}
	}
}

// PublishRuleChange publishes a state change: the new retained state
// and one event.
func PublishRuleChange(sink Sink, tr rules.Transition) {
	s := ruleState(tr.Verdict)
	if b, err := json.Marshal(s); err == nil {
		sink.Publish("rule/"+s.Rule+"/state", b, true)
	}
	s.From = tr.From
	if b, err := json.Marshal(s); err == nil {
		sink.Publish("rule/"+s.Rule+"/event", b, false)
	}
}
