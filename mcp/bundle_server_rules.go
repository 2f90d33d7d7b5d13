package mcp

import "fieldtap/services/rules"

const toolRuleStatus = "rule_status"

type ruleStatusIn struct {
	Paging
	Projection
}

// ruleStatusTool answers what the box's own [[rule]] watch says now;
// the rules are evaluated whether or not anyone asks (docs/rules.md).
var ruleStatusTool = tool[ruleStatusIn, page[ruleVerdictRow]]{
	name:  toolRuleStatus,
	reads: readsNothing,
	desc:  "The box's configured rules (docs/rules.md), in configuration order: state (ok, pending, firing, no_data), since, value over the window, threshold, and the evidence figures with the tool that shows them. Paged.",
	hints: readOnly(),
	ids:   []string{"rule"},
	run: func(c *call, in ruleStatusIn) (page[ruleVerdictRow], error) {
		var vs []rules.Verdict
		if c.d.Rules == nil {
			c.warnf("no [[rule]] is configured on this box (docs/rules.md)")
		} else {
			vs = c.d.Rules.Verdicts()
		}
		rows := make([]ruleVerdictRow, len(vs))
		for i, v := range vs {
			rows[i] = ruleVerdictRowOf(i, v)
		}
		return pageSlice(c, in.Paging, rows, func(r ruleVerdictRow) rowKey { return key1(r.index) })
	},
}
