package sip

import (
	"net/netip"
	"strings"
)

// Registration kinds (RegKind.Kind).
const (
	KindUser  = "user"
	KindTrunk = "trunk"
)

// Why a registration is judged a trunk (RegKind.Reasons).
const (
	ReasonPBXAgent   = "pbx_user_agent"      // its User-Agent names PBX software
	ReasonRegistrar  = "source_is_registrar" // its source address and port answers REGISTERs of other AoRs
	ReasonNoUserPart = "no_user_part"        // the AoR names a host only
)

// pbxAgents are lowercased words of the User-Agents that PBX software
// sends when it registers to a provider. Phones' own User-Agents (Yealink,
// Polycom, Linphone, a 3CX softphone's "3CXPhone") carry none of them.
var pbxAgents = []string{"asterisk", "freepbx", "fpbx-", "freeswitch", "3cxphonesystem", "kamailio", "opensips", "yeastar", "issabel", "elastix"}

// RegKind is whether a registration is a user's or a trunk's, and why.
type RegKind struct {
	Kind    string
	Reasons []string // empty for a user
}

// Kinds judges each row user or trunk: a trunk is a REGISTER a PBX or
// another server sends, known by its User-Agent naming PBX software, by
// its source also being the registrar of other rows in the table, or by
// an AoR without a user part. Anything else is a user. It is a
// heuristic over what the capture shows, and says which signs it read.
func Kinds(rows []Registration) []RegKind {
	registrars := map[netip.AddrPort]bool{}
	for _, r := range rows {
		if r.Registrar.IsValid() {
			registrars[unmap(r.Registrar)] = true
		}
	}
	out := make([]RegKind, len(rows))
	for i, r := range rows {
		k := RegKind{Kind: KindUser}
		ua := strings.ToLower(r.UserAgent)
		for _, w := range pbxAgents {
			if strings.Contains(ua, w) {
				k.Reasons = append(k.Reasons, ReasonPBXAgent)
				break
			}
		}
		if r.Source.IsValid() && registrars[unmap(r.Source)] {
			k.Reasons = append(k.Reasons, ReasonRegistrar)
		}
		if len(UserOf([]byte(r.AoR))) == 0 {
			k.Reasons = append(k.Reasons, ReasonNoUserPart)
		}
		if len(k.Reasons) > 0 {
			k.Kind = KindTrunk
		}
		out[i] = k
	}
	return out
}

func unmap(a netip.AddrPort) netip.AddrPort { return netip.AddrPortFrom(a.Addr().Unmap(), a.Port()) }
