package mcp

import (
	"time"

	"fieldtap/mcp/untrusted"
	"fieldtap/services/sip"
)

// registrationRow is one address of record as sip_registrations answers
// it. The AoR is the row's identifier (bare, as a Call-ID is, so it
// round-trips as an aor argument); what the sender wrote besides (the
// Request-URI, contacts, the User-Agent) is fenced. States, kinds,
// reasons and codes are the box's vocabulary.
type registrationRow struct {
	AoR                 string          `json:"aor" jsonschema:"the To URI of its REGISTERs without URI parameters, scheme and host lowercased"`
	State               string          `json:"state" jsonschema:"registered, lapsed (the granted expiry passed with no refresh seen), unregistered (Expires: 0), failed or pending, judged at judged_at"`
	Kind                string          `json:"kind" jsonschema:"user or trunk (docs/sip.md#registrations says how it is judged)"`
	KindReasons         []string        `json:"kind_reasons" jsonschema:"why trunk: pbx_user_agent, source_is_registrar, no_user_part; empty for a user"`
	Registrar           string          `json:"registrar" jsonschema:"address:port the last REGISTER went to (or that answered)"`
	RequestURI          untrusted.Text  `json:"request_uri" jsonschema:"the last REGISTER's Request-URI"`
	Source              string          `json:"source" jsonschema:"address:port of the last REGISTER's sender"`
	UserAgent           *untrusted.Text `json:"user_agent" jsonschema:"the last REGISTER's User-Agent; null without one"`
	Contacts            []regContactRow `json:"contacts" jsonschema:"the bindings the last 2xx granted, at most 8"`
	ContactsOver        int             `json:"contacts_over" jsonschema:"bindings of that grant past the 8 kept"`
	ExpiresAt           *string         `json:"expires_at" jsonschema:"the latest expiry of the last grant; null when it named none"`
	ExpiresInS          *float64        `json:"expires_in_s" jsonschema:"expires_at minus judged_at, negative once passed; null with expires_at"`
	FirstSeen           string          `json:"first_seen"`
	LastSeen            string          `json:"last_seen"`
	LastSuccess         *string         `json:"last_success" jsonschema:"the last 2xx that left a binding; null without one"`
	LastFailure         *string         `json:"last_failure" jsonschema:"null without a failure"`
	LastFailureCode     *int            `json:"last_failure_code" jsonschema:"null when the last failure was no answer, or without one"`
	Requests            int             `json:"requests" jsonschema:"REGISTER requests, retransmissions apart"`
	Retransmits         int             `json:"retransmits" jsonschema:"retransmitted REGISTERs and answers"`
	Challenges401       int             `json:"challenges_401"`
	Challenges407       int             `json:"challenges_407"`
	Successes           int             `json:"successes" jsonschema:"attempts answered 2xx leaving a binding; a 401/407 then 200 is one success, not a failure"`
	ChallengedSuccesses int             `json:"challenged_successes" jsonschema:"of successes, those after a challenge"`
	Unregistrations     int             `json:"unregistrations" jsonschema:"2xx to an Expires: 0 or Contact: * REGISTER"`
	Failures            []regFailureRow `json:"failures" jsonschema:"final 3xx-6xx answers (401/407 apart) by code, at most 16 codes"`
	FailuresOther       int             `json:"failures_other" jsonschema:"failures with a code past the 16 kept"`
	FailedChallenges    int             `json:"failed_challenges" jsonschema:"attempts challenged 401/407 that then failed: refused or not answered"`
	NoAnswer            int             `json:"no_answer" jsonschema:"attempts with no final answer within 32 s of capture time (Timer F)"`
	AwaitingAnswer      int             `json:"awaiting_answer" jsonschema:"attempts still inside their 32 s"`
	Lapses              int             `json:"lapses" jsonschema:"grants that expired with no refresh seen"`
	Flaps               int             `json:"flaps" jsonschema:"registered, then failed or lapsed, then registered again"`
	JudgedAt            string          `json:"judged_at" jsonschema:"the time state and expiry are judged at: the capture's latest message for a file, the box's clock when live"`
}

// regContactRow is one binding as granted.
type regContactRow struct {
	URI       untrusted.Text `json:"uri"`
	ExpiresS  *int           `json:"expires_s" jsonschema:"seconds granted; null when the answer named none"`
	ExpiresAt *string        `json:"expires_at"`
}

// regFailureRow is a final code and how often it ended an attempt.
type regFailureRow struct {
	Code  int `json:"code"`
	Count int `json:"count"`
}

func registrationRowOf(r sip.Registration, k sip.RegKind, at time.Time) registrationRow {
	row := registrationRow{AoR: r.AoR, State: r.State(), Kind: k.Kind, KindReasons: nonNil(k.Reasons),
		Registrar: r.Registrar.String(), RequestURI: untrusted.Text(r.RequestURI), Source: r.Source.String(),
		Contacts: []regContactRow{}, ContactsOver: r.ContactsOver, FirstSeen: ts(r.FirstSeen), LastSeen: ts(r.LastSeen),
		Requests: r.Requests, Retransmits: r.Retransmits, Challenges401: r.Challenges401, Challenges407: r.Challenges407,
		Successes: r.Successes, ChallengedSuccesses: r.ChallengedSuccesses, Unregistrations: r.Unregistrations,
		Failures: []regFailureRow{}, FailuresOther: r.FailuresOther, FailedChallenges: r.FailedChallenges, NoAnswer: r.NoAnswer,
		AwaitingAnswer: r.Open(), Lapses: r.Lapses, Flaps: r.Flaps, JudgedAt: ts(at)}
	if r.UserAgent != "" {
		ua := untrusted.Text(r.UserAgent)
		row.UserAgent = &ua
	}
	for _, c := range r.Contacts {
		cr := regContactRow{URI: untrusted.Text(c.URI)}
		if c.Expires >= 0 {
			e, until := c.Expires, ts(c.ExpiresAt)
			cr.ExpiresS, cr.ExpiresAt = &e, &until
		}
		row.Contacts = append(row.Contacts, cr)
	}
	if !r.ExpiresAt.IsZero() {
		e, in := ts(r.ExpiresAt), r.ExpiresAt.Sub(at).Seconds()
		row.ExpiresAt, row.ExpiresInS = &e, &in
	}
	if !r.LastSuccess.IsZero() {
		s := ts(r.LastSuccess)
		row.LastSuccess = &s
	}
	if !r.LastFailure.IsZero() {
		f := ts(r.LastFailure)
		row.LastFailure = &f
		if r.LastFailureCode != 0 {
			code := r.LastFailureCode
			row.LastFailureCode = &code
		}
	}
	for _, f := range r.Failures {
		row.Failures = append(row.Failures, regFailureRow{Code: f.Code, Count: f.N})
	}
	return row
}
