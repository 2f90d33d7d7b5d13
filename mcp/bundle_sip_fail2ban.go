package mcp

import (
	"fmt"
	"net/netip"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"

	"fieldtap/services/filter"
	"fieldtap/services/sipfail2ban"
	"fieldtap/services/sipsecurity"
)

// findingIDArg is a finding id as sip_security_findings returns it.
type findingIDArg string

func (findingIDArg) argSchema() *jsonschema.Schema {
	n := 128
	return &jsonschema.Schema{Type: "string", MaxLength: &n, Description: "a finding's id as sip_security_findings returns it (kind/source/first time)"}
}

type findingKindArg string

func (findingKindArg) argSchema() *jsonschema.Schema {
	return enumArg("with source: the finding's kind (its latest episode is taken)",
		[]string{sipsecurity.KindScanner, sipsecurity.KindRegisterFlood, sipsecurity.KindAuthStorm, sipsecurity.KindInviteFlood, sipsecurity.KindOptionsSweep})
}

type pbxArg string

func (pbxArg) argSchema() *jsonschema.Schema {
	var names []string
	for _, p := range sipfail2ban.PBXs {
		names = append(names, string(p))
	}
	return enumArg("whose log the filter reads; by default the PBX a User-Agent or Server value of the finding names, else asterisk", names)
}

type fail2banIn struct {
	Finding findingIDArg   `json:"finding,omitempty"`
	Kind    findingKindArg `json:"kind,omitempty"`
	Source  ipArg          `json:"source,omitempty" jsonschema:"with kind: the finding's source address"`
	PBX     pbxArg         `json:"pbx,omitempty"`
	Filter  filterArg      `json:"filter,omitempty" jsonschema:"the filter sip_security_findings listed the finding with"`
}

type fail2banOut struct {
	Finding       string `json:"finding" jsonschema:"the finding's id"`
	Kind          string `json:"kind"`
	Source        string `json:"source"`
	PBX           string `json:"pbx"`
	PBXFrom       string `json:"pbx_from" jsonschema:"argument, user_agent (a User-Agent or Server value of the finding named it) or default"`
	Log           string `json:"log" jsonschema:"the log the filter reads and how the PBX is set to write it"`
	LogPath       string `json:"log_path"`
	FilterPath    string `json:"filter_path" jsonschema:"where the filter goes"`
	Filter        string `json:"filter" jsonschema:"the filter file: failregex with <HOST>, from the box's templates"`
	JailPath      string `json:"jail_path" jsonschema:"where the jail goes"`
	Jail          string `json:"jail" jsonschema:"the jail section: maxretry and findtime are the finding's threshold and window"`
	SampleLogLine string `json:"sample_log_line" jsonschema:"a log line of this source that the failregex matches"`
	Check         string `json:"check" jsonschema:"how to test the filter on the sample"`
	Note          string `json:"note,omitempty" jsonschema:"what this PBX's log does not show of this kind"`
}

var generateFail2banRule = tool[fail2banIn, fail2banOut]{
	name:  "generate_fail2ban_rule",
	reads: readsSIP,
	desc:  "A fail2ban filter and jail that ban a sip_security_findings finding's source on the PBX's log (Asterisk security log, Kamailio pike alerts, FreeSWITCH), with a sample line the filter matches.",
	hints: readOnly(),
	run: func(c *call, in fail2banIn) (fail2banOut, error) {
		e, err := in.Filter.compile()
		if err != nil {
			return fail2banOut{}, err
		}
		f, err := pickFinding(c, e, in)
		if err != nil {
			return fail2banOut{}, err
		}
		pbx, from := sipfail2ban.PBX(in.PBX), "argument"
		if pbx == "" {
			pbx, from = sipfail2ban.Asterisk, "default"
			for _, ua := range f.UserAgents.Top {
				if p, ok := sipfail2ban.Guess(ua.Value); ok {
					pbx, from = p, "user_agent"
					break
				}
			}
		}
		bf := sipfail2ban.Finding{ID: f.ID, Kind: f.Kind, Source: f.Source, At: f.Last, Threshold: f.Threshold, Window: f.Window}
		if len(f.Sources.Top) > 0 {
			bf.SourcePort = f.Sources.Top[0].Value.Port()
		}
		if len(f.Targets.Top) > 0 {
			bf.Local = f.Targets.Top[0].Value.Dst
		}
		r, err := sipfail2ban.Build(bf, pbx)
		if err != nil {
			return fail2banOut{}, argErr("finding", "a finding whose source fail2ban can ban", "%v", err)
		}
		filterPath := "/etc/fail2ban/filter.d/" + r.Name + ".conf"
		return fail2banOut{Finding: f.ID, Kind: f.Kind, Source: f.Source.String(), PBX: string(pbx), PBXFrom: from, Log: r.Log, LogPath: r.LogPath,
			FilterPath: filterPath, Filter: r.Filter, JailPath: "/etc/fail2ban/jail.d/" + r.Name + ".conf", Jail: r.Jail, SampleLogLine: r.Sample,
			Check: "write sample_log_line to sample.log, then: fail2ban-regex sample.log " + filterPath, Note: r.Note}, nil
	},
}

// pickFinding finds the finding in.Finding names, or the latest episode of
// in.Kind from in.Source.
func pickFinding(c *call, e *filter.Expr, in fail2banIn) (sipsecurity.Finding, error) {
	r, _ := securityReport(c, e)
	hint := "sip_security_findings lists the findings and their ids"
	if r.FindingsLeft > 0 {
		hint += fmt.Sprintf("; it lists %d and counted %d more, which cannot be named", sipsecurity.MaxFindings, r.FindingsLeft)
	}
	switch {
	case in.Finding != "" && (in.Kind != "" || in.Source != ""):
		return sipsecurity.Finding{}, argErr("finding", "give finding, or kind and source", "finding names one already: kind and source are not wanted with it")
	case in.Finding != "":
		i := slices.IndexFunc(r.Findings, func(f sipsecurity.Finding) bool { return f.ID == string(in.Finding) })
		if i < 0 {
			return sipsecurity.Finding{}, notFound(hint, "no finding %q", string(in.Finding))
		}
		return r.Findings[i], nil
	case in.Kind == "" || in.Source == "":
		return sipsecurity.Finding{}, argErr("finding", "give finding, or kind and source", "no finding named: want finding, or kind and source")
	}
	src, err := netip.ParseAddr(string(in.Source))
	if err != nil {
		return sipsecurity.Finding{}, argErr("source", "an IPv4 or IPv6 address, as sip_security_findings lists it", "%q is not an IP address", string(in.Source))
	}
	var best *sipsecurity.Finding
	for i, f := range r.Findings {
		if f.Kind == string(in.Kind) && f.Source == src.Unmap() && (best == nil || f.First.After(best.First)) {
			best = &r.Findings[i]
		}
	}
	if best == nil {
		return sipsecurity.Finding{}, notFound(hint, "no %s finding from %s", string(in.Kind), src.Unmap())
	}
	return *best, nil
}
