package mcp

import (
	"net/netip"

	"fieldtap/mcp/untrusted"
	"fieldtap/services/sipsecurity"
)

// The rows of sip_security_findings: one finding is one episode of one
// source (sipsecurity.Finding).

// securityEvidence is one transaction behind a finding.
type securityEvidence struct {
	CallID    string          `json:"call_id"`
	Time      string          `json:"time"`
	Method    string          `json:"method"`
	Dst       string          `json:"dst"`
	FinalCode *int            `json:"final_code"`
	UserAgent *untrusted.Text `json:"user_agent,omitempty" jsonschema:"the scanner's User-Agent, as written"`
}

type peakRow struct {
	Count         int     `json:"count" jsonschema:"the most events in one window of the episode (distinct targets for options_sweep)"`
	WindowSeconds float64 `json:"window_seconds" jsonschema:"the window's length (sip_security.window)"`
	Start         string  `json:"start" jsonschema:"the peak window's first event"`
}

type sourcePortRow struct {
	Source string `json:"source" jsonschema:"address:port"`
	Events int    `json:"events"`
}

type sourcesRow struct {
	Top          []sourcePortRow `json:"top" jsonschema:"the source's address:port pairs, most events first, at most 10"`
	Others       int             `json:"others" jsonschema:"pairs past 10, not listed"`
	OthersEvents int             `json:"others_events" jsonschema:"their events"`
}

type userAgentCountRow struct {
	UserAgent untrusted.Text `json:"user_agent"`
	Events    int            `json:"events"`
}

type userAgentsRow struct {
	Top          []userAgentCountRow `json:"top" jsonschema:"User-Agent and Server values of the events' dialogs (both sides), most events first, at most 10"`
	Others       int                 `json:"others" jsonschema:"values past 10, not listed"`
	OthersEvents int                 `json:"others_events" jsonschema:"their events"`
}

type targetRow struct {
	Dst    string          `json:"dst" jsonschema:"the requests' destination address:port"`
	User   *untrusted.Text `json:"user,omitempty" jsonschema:"the To user, when the request was its dialog's first (the store keeps that one)"`
	Events int             `json:"events"`
}

type targetsRow struct {
	Top          []targetRow `json:"top" jsonschema:"most events first, at most 10"`
	Others       int         `json:"others" jsonschema:"targets past 10, not listed"`
	OthersEvents int         `json:"others_events" jsonschema:"their events"`
}

type findingRow struct {
	ID              string             `json:"id" jsonschema:"kind/source/first time: generate_fail2ban_rule takes it"`
	Kind            string             `json:"kind" jsonschema:"scanner_user_agent, register_flood, digest_bruteforce, invite_flood or options_sweep"`
	Source          string             `json:"source" jsonschema:"the source address"`
	First           string             `json:"first" jsonschema:"the episode's first event"`
	Last            string             `json:"last" jsonschema:"its last event"`
	DurationSeconds float64            `json:"duration_seconds"`
	Total           int                `json:"total" jsonschema:"the episode's events: transactions, 401/407 answers (digest_bruteforce) or dialogs (scanner_user_agent)"`
	Peak            peakRow            `json:"peak"`
	Threshold       int                `json:"threshold" jsonschema:"events per window that make a finding"`
	Answered4xx     int                `json:"answered_4xx" jsonschema:"events whose final answer was 4xx"`
	Answered4xxPct  float64            `json:"answered_4xx_pct" jsonschema:"their share of total, in percent"`
	Sources         sourcesRow         `json:"sources"`
	UserAgents      userAgentsRow      `json:"user_agents"`
	Targets         targetsRow         `json:"targets"`
	Evidence        []securityEvidence `json:"evidence" jsonschema:"the episode's first 10 events"`
	More            int                `json:"more_evidence" jsonschema:"events past those 10"`
}

func findingRowOf(f sipsecurity.Finding) findingRow {
	return findingRow{ID: f.ID, Kind: f.Kind, Source: f.Source.String(), First: ts(f.First), Last: ts(f.Last), DurationSeconds: f.Last.Sub(f.First).Seconds(),
		Total: f.Total, Peak: peakRow{Count: f.Peak, WindowSeconds: f.Window.Seconds(), Start: ts(f.PeakStart)}, Threshold: f.Threshold,
		Answered4xx: f.Answered4xx, Answered4xxPct: 100 * float64(f.Answered4xx) / float64(f.Total),
		Sources:    sourcesRow{Top: mapRows(f.Sources.Top, sourcePortRowOf), Others: f.Sources.Others, OthersEvents: f.Sources.OthersEvents},
		UserAgents: userAgentsRow{Top: mapRows(f.UserAgents.Top, userAgentCountRowOf), Others: f.UserAgents.Others, OthersEvents: f.UserAgents.OthersEvents},
		Targets:    targetsRow{Top: mapRows(f.Targets.Top, targetRowOf), Others: f.Targets.Others, OthersEvents: f.Targets.OthersEvents},
		Evidence:   mapRows(f.Evidence, securityEvidenceOf), More: f.More}
}

func sourcePortRowOf(c sipsecurity.Counted[netip.AddrPort]) sourcePortRow {
	return sourcePortRow{Source: c.Value.String(), Events: c.Events}
}

func userAgentCountRowOf(c sipsecurity.Counted[string]) userAgentCountRow {
	return userAgentCountRow{UserAgent: untrusted.Text(c.Value), Events: c.Events}
}

func targetRowOf(c sipsecurity.Counted[sipsecurity.Target]) targetRow {
	r := targetRow{Dst: c.Value.Dst.String(), Events: c.Events}
	if c.Value.User != "" {
		u := untrusted.Text(c.Value.User)
		r.User = &u
	}
	return r
}

func securityEvidenceOf(ev sipsecurity.Evidence) securityEvidence {
	se := securityEvidence{CallID: ev.CallID, Time: ts(ev.Time), Method: ev.Method, Dst: ev.Dst.String(), FinalCode: finalCode(ev.FinalCode)}
	if ev.UserAgent != "" {
		ua := untrusted.Text(ev.UserAgent)
		se.UserAgent = &ua
	}
	return se
}
