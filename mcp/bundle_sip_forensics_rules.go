package mcp

import (
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"fieldtap/mcp/untrusted"
	"fieldtap/services/siplint"
)

// The conformance tools of the sip_forensics bundle: validate_message
// checks one message, explain_rule answers for any rule id a checker
// reports. Both read siplint.Rules, the table lint_dialog reports from.

type validateFindingRow struct {
	Rule     ruleRow         `json:"rule"`
	Detail   string          `json:"detail" jsonschema:"the box's own words"`
	Evidence *untrusted.Text `json:"evidence,omitempty" jsonschema:"the header value or SDP line, as written"`
}

type validateMessageOut struct {
	CallID            string               `json:"call_id"`
	Message           messageRow           `json:"message"`
	Evaluated         []string             `json:"rules_evaluated"`
	Findings          []validateFindingRow `json:"findings"`
	More              int                  `json:"more_findings" jsonschema:"findings past 32, not listed"`
	RulesNotEvaluated []notEvaluatedRow    `json:"rules_not_evaluated"`
}

var validateMessage = tool[getMessageIn, validateMessageOut]{
	name:  "validate_message",
	reads: readsSIP,
	desc:  "Check one message (as get_message) against RFC 3261 header rules and RFC 4566 SDP syntax; findings with rule, RFC section, severity, evidence.",
	hints: readOnly(),
	text:  []textSource{textSIP},
	run: func(c *call, in getMessageIn) (validateMessageOut, error) {
		sn := c.d.SIP.Snapshot()
		dl, err := lookupDialog(sn, in.CallID)
		if err != nil {
			return validateMessageOut{}, err
		}
		seqs := dl.Messages()
		if int(in.Index) >= len(seqs) {
			return validateMessageOut{}, notFound("get_dialog lists the messages", "index %d: the dialog keeps messages 0 to %d", in.Index, len(seqs)-1)
		}
		m, kept := sn.Message(seqs[in.Index])
		if !kept {
			return validateMessageOut{}, notFound("get_capture_report counts what the store's bounds evicted", "message %d's bytes were evicted by the store's byte bound", in.Index)
		}
		v, err := siplint.Validate(m.Raw, m.Transport)
		if err != nil {
			return validateMessageOut{}, notFound("get_message shows what the store kept", "message %d cannot be validated: %v", in.Index, err)
		}
		out := validateMessageOut{CallID: dl.CallID, Message: messageRowOf(m), Evaluated: nonNil(v.Evaluated), More: v.More,
			Findings: make([]validateFindingRow, 0, len(v.Findings)), RulesNotEvaluated: make([]notEvaluatedRow, 0, len(v.NotEvaluated))}
		for _, f := range v.Findings {
			row := validateFindingRow{Rule: ruleRowOf(f.Rule), Detail: f.Detail}
			if f.Evidence != "" {
				ev := untrusted.Text(f.Evidence)
				row.Evidence = &ev
			}
			out.Findings = append(out.Findings, row)
		}
		for _, n := range v.NotEvaluated {
			out.RulesNotEvaluated = append(out.RulesNotEvaluated, notEvaluatedRow{Rule: ruleRowOf(n.Rule), Reason: n.Reason})
		}
		return out, nil
	},
}

// ruleArg is a rule id of lint_dialog, validate_message or
// sip_security_findings.
type ruleArg string

func (ruleArg) argSchema() *jsonschema.Schema {
	n := 64
	return &jsonschema.Schema{Type: "string", MaxLength: &n, Description: "a rule id, e.g. missing_ack"}
}

type explainRuleIn struct {
	Rule ruleArg `json:"rule"`
}

type explainRuleOut struct {
	ruleRow
	Checker string `json:"checked_by" jsonschema:"the tool that reports it"`
	Fix     string `json:"fix" jsonschema:"what to change on the sender"`
}

var explainRule = tool[explainRuleIn, explainRuleOut]{
	name:  "explain_rule",
	reads: readsNothing,
	desc:  "What a rule of lint_dialog, validate_message or sip_security_findings checks, its RFC section, severity, and the fix.",
	hints: readOnly(),
	run: func(c *call, in explainRuleIn) (explainRuleOut, error) {
		r, ok := siplint.RuleByID(string(in.Rule))
		if !ok {
			return explainRuleOut{}, argErr("rule", "one of: "+strings.Join(siplint.RuleIDs(), ", "), "%q is not a rule id", string(in.Rule))
		}
		return explainRuleOut{ruleRow: ruleRowOf(r), Checker: r.Checker, Fix: r.Fix}, nil
	},
}
