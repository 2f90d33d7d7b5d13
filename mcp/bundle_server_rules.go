package mcp

const toolRuleStatus = "rule_status"

// ruleStatusOut is every rule: at most rules.MaxRules, so one answer
// holds them all and the tool takes no paging.
type ruleStatusOut struct {
	Rules []ruleVerdictRow `json:"rules"`
}

// ruleStatusTool answers what the box's own [[rule]] watch says now;
// the rules are evaluated whether or not anyone asks (docs/rules.md).
var ruleStatusTool = tool[noArgs, ruleStatusOut]{
	name:  toolRuleStatus,
	reads: readsNothing,
	desc:  "Every configured rule (docs/rules.md): state (ok, pending, firing, no_data), since, value, threshold, evidence figures and the tool showing them.",
	hints: readOnly(),
	run: func(c *call, _ noArgs) (ruleStatusOut, error) {
		out := ruleStatusOut{Rules: []ruleVerdictRow{}}
		if c.d.Rules == nil {
			c.warnf("no [[rule]] is configured on this box (docs/rules.md)")
			return out, nil
		}
		for _, v := range c.d.Rules.Verdicts() {
			out.Rules = append(out.Rules, ruleVerdictRowOf(v))
		}
		return out, nil
	},
}

// rulesTools is the rules bundle, loaded by default: a box without
// [[rule]] answers an empty list with a warning.
var rulesTools = []toolDef{ruleStatusTool}
