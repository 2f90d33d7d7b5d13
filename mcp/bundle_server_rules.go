package mcp

import (
	"strings"

	"fieldtap/services/rules"
)

const toolRuleStatus = "rule_status"

type ruleStatusIn struct {
	Rule string `json:"rule,omitempty" jsonschema:"one rule by name; default every rule"`
	Paging
}

// ruleStatusOut is every rule's verdict (at most rules.MaxRules, never
// paged) and one page of the state changes the engine keeps.
type ruleStatusOut struct {
	Rules   []ruleVerdictRow `json:"rules"`
	History []ruleChangeRow  `json:"history" jsonschema:"state changes, oldest first, limit per call"`
	Page    Page             `json:"history_page" jsonschema:"the page of history: follow next_cursor for the rest"`
	LetGo   uint64           `json:"history_let_go" jsonschema:"changes of every rule let go before the oldest kept (the box keeps 1024)"`
}

// ruleStatusTool answers what the box's own [[rule]] watch says now and
// how it got there; the rules are evaluated whether or not anyone asks
// (docs/rules.md).
var ruleStatusTool = tool[ruleStatusIn, ruleStatusOut]{
	name:  toolRuleStatus,
	reads: readsNothing,
	desc: "Every configured rule (docs/rules.md): state (ok, pending, firing, no_data), since, value, threshold, evidence figures and the tool showing them; " +
		"then its state changes (the newest 1024 kept), oldest first. Paged.",
	hints: readOnly(),
	run: func(c *call, in ruleStatusIn) (ruleStatusOut, error) {
		out := ruleStatusOut{Rules: []ruleVerdictRow{}, History: []ruleChangeRow{}}
		if c.d.Rules == nil {
			c.warnf("no [[rule]] is configured on this box (docs/rules.md)")
			return out, nil
		}
		vs := c.d.Rules.Verdicts()
		if in.Rule != "" && !hasRule(vs, in.Rule) {
			names := make([]string, len(vs))
			for i, v := range vs {
				names[i] = v.Rule.Name
			}
			return out, argErr("rule", "name one of: "+strings.Join(names, ", "), "no rule %q is configured", in.Rule)
		}
		for _, v := range vs {
			if in.Rule == "" || v.Rule.Name == in.Rule {
				out.Rules = append(out.Rules, ruleVerdictRowOf(v))
			}
		}
		h := c.d.Rules.History()
		pg, err := pageRing(c, in.Paging, h, "rule changes",
			func(tr rules.Transition) bool { return in.Rule == "" || tr.Verdict.Rule.Name == in.Rule }, ruleChangeRowOf)
		if err != nil {
			return out, err
		}
		out.History, out.Page, out.LetGo = pg.Items, pg.Page, h.FirstSeq()
		if out.LetGo > 0 {
			c.warnf("%d older state changes were let go: the box keeps the newest %d", out.LetGo, rules.HistoryLen)
		}
		return out, nil
	},
}

func hasRule(vs []rules.Verdict, name string) bool {
	for _, v := range vs {
		if v.Rule.Name == name {
			return true
		}
	}
	return false
}

// rulesTools is the rules bundle, loaded by default: a box without
// [[rule]] answers an empty list with a warning.
var rulesTools = []toolDef{ruleStatusTool}
