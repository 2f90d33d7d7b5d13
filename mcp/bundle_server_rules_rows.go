package mcp

import (
	"time"

	"fieldtap/services/rules"
)

// ruleVerdictRow is one configured rule's verdict.
type ruleVerdictRow struct {
	Rule        string             `json:"rule"`
	Kind        string             `json:"kind"`
	Port        string             `json:"port,omitempty"`
	Code        int                `json:"code" jsonschema:"dm1_active: the SPN; j1587_fault: the PID; 0 for the other kinds"`
	FMI         *int               `json:"fmi" jsonschema:"the fault kinds' FMI; null for any"`
	Group       string             `json:"group,omitempty" jsonschema:"sip_asr, sip_ner, sip_pdd: the group_dialogs dimension; absent for every dialog"`
	Key         string             `json:"key,omitempty" jsonschema:"the group's value"`
	Percentile  int                `json:"percentile,omitempty" jsonschema:"sip_pdd: 50 or 95"`
	Band        string             `json:"band,omitempty" jsonschema:"mos_share: the G.107 band (it and the worse ones)"`
	AoR         string             `json:"aor,omitempty" jsonschema:"sip_reg_failures: text of the addresses of record counted"`
	Finding     string             `json:"finding,omitempty" jsonschema:"sip_security: the finding kind counted; absent for every kind"`
	Severity    string             `json:"severity"`
	State       string             `json:"state" jsonschema:"ok, pending (holds, not yet for its for), firing, or no_data (population guard not met)"`
	Since       *time.Time         `json:"since" jsonschema:"when the state began; null before the first evaluation"`
	Value       *float64           `json:"value" jsonschema:"the value over the window; null while no_data"`
	Op          string             `json:"op"`
	Threshold   float64            `json:"threshold"`
	Window      string             `json:"window"`
	For         string             `json:"for"`
	MinSamples  int                `json:"min_samples"`
	Samples     int                `json:"samples"`
	Why         string             `json:"why,omitempty" jsonschema:"for no_data: what is missing"`
	Transitions uint64             `json:"transitions"`
	Trimmed     uint64             `json:"samples_trimmed" jsonschema:"samples let go before leaving the window (a window keeps at most 1024)"`
	Tool        string             `json:"evidence_tool" jsonschema:"the tool whose answer shows the figures"`
	Args        map[string]string  `json:"evidence_args"`
	Figures     map[string]float64 `json:"evidence_figures"`
}

func ruleVerdictRowOf(v rules.Verdict) ruleVerdictRow {
	r := ruleVerdictRow{Rule: v.Rule.Name, Kind: v.Rule.Kind, Port: v.Rule.Port, Code: v.Rule.Code, FMI: v.Rule.FMI, Severity: v.Rule.Severity, State: v.State,
		Group: v.Rule.Group, Key: v.Rule.Key, Percentile: v.Rule.Percentile, Band: v.Rule.Band, AoR: v.Rule.AoR, Finding: v.Rule.Finding,
		Op: v.Rule.Op, Threshold: v.Rule.Value, Window: v.Rule.Window.String(), For: v.Rule.For.String(), MinSamples: v.Rule.MinSamples,
		Samples: v.Samples, Why: v.Why, Transitions: v.Transitions, Trimmed: v.Trimmed,
		Tool: v.Evidence.Tool, Args: v.Evidence.Args, Figures: v.Evidence.Figures}
	if !v.Since.IsZero() {
		t := v.Since.UTC()
		r.Since = &t
	}
	if v.HasValue {
		r.Value = &v.Value
	}
	return r
}

// ruleChangeRow is one state change of a rule, as the engine kept it.
type ruleChangeRow struct {
	Seq      uint64             `json:"seq" jsonschema:"the change's number since start"`
	At       time.Time          `json:"at"`
	Rule     string             `json:"rule"`
	Severity string             `json:"severity"`
	From     string             `json:"from"`
	To       string             `json:"to"`
	Value    *float64           `json:"value" jsonschema:"the value over the window at the change; null going to no_data"`
	Why      string             `json:"why,omitempty" jsonschema:"going to no_data: what is missing"`
	Tool     string             `json:"evidence_tool"`
	Args     map[string]string  `json:"evidence_args"`
	Figures  map[string]float64 `json:"evidence_figures"`
}

func ruleChangeRowOf(seq uint64, tr rules.Transition) ruleChangeRow {
	v := tr.Verdict
	r := ruleChangeRow{Seq: seq, At: tr.At.UTC(), Rule: v.Rule.Name, Severity: v.Rule.Severity, From: tr.From, To: tr.To, Why: v.Why,
		Tool: v.Evidence.Tool, Args: v.Evidence.Args, Figures: v.Evidence.Figures}
	if v.HasValue {
		val := v.Value
		r.Value = &val
	}
	return r
}
