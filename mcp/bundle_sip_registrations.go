package mcp

import (
	"hash/fnv"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"fieldtap/services/sip"
)

// aorArg is a substring of an address of record.
type aorArg string

func (aorArg) argSchema() *jsonschema.Schema {
	n := 256
	return &jsonschema.Schema{Type: "string", MaxLength: &n, Description: "rows whose AoR contains this text (case-insensitive), e.g. 1001 or @pbx.example.com"}
}

// registrarArg is a substring of a registrar's address or Request-URI.
type registrarArg string

func (registrarArg) argSchema() *jsonschema.Schema {
	n := 256
	return &jsonschema.Schema{Type: "string", MaxLength: &n, Description: "rows whose registrar address:port or Request-URI contains this text (case-insensitive), e.g. 192.0.2.1"}
}

type regStateArg string

func (regStateArg) argSchema() *jsonschema.Schema {
	return enumArg("only rows in this state", sip.RegStates)
}

type regKindArg string

func (regKindArg) argSchema() *jsonschema.Schema {
	return enumArg("only users or only trunks", []string{sip.KindUser, sip.KindTrunk})
}

type sipRegistrationsIn struct {
	AoR       aorArg       `json:"aor,omitempty"`
	State     regStateArg  `json:"state,omitempty"`
	Kind      regKindArg   `json:"kind,omitempty"`
	Registrar registrarArg `json:"registrar,omitempty"`
	Paging
	Projection
}

var sipRegistrations = tool[sipRegistrationsIn, page[registrationRow]]{
	name:  "sip_registrations",
	reads: readsSIP,
	desc: "One row per address of record (the To URI of REGISTER): registrar, contacts with their granted expiry, last success, failures by code, " +
		"failed challenges (a 401/407 then 200 is one success), no answers, lapses, flaps, state (registered, lapsed, unregistered, failed, pending) " +
		"and user or trunk. Filters: aor, state, kind, registrar. Oldest first seen first; paged.",
	hints: readOnly(),
	ids:   []string{"aor"},
	text:  []textSource{textSIP},
	run: func(c *call, in sipRegistrationsIn) (page[registrationRow], error) {
		v := c.d.SIP.Registrations()
		// A file is judged at its latest message; a live capture at the
		// box's clock, so a phone that went quiet lapses on time.
		at := v.Latest
		if now := time.Now(); c.src.Live && now.After(at) {
			at = now
		}
		if v.Evicted > 0 {
			c.warnf("%d addresses of record were evicted from the registration table, least recently seen first (bound %d): rows for them are gone", v.Evicted, sip.MaxRegistrations)
		}
		if v.NoAoR > 0 {
			c.warnf("%d REGISTER messages had no URI in their To header and are in no row", v.NoAoR)
		}
		kinds := sip.Kinds(v.Rows)
		aor, reg := strings.ToLower(string(in.AoR)), strings.ToLower(string(in.Registrar))
		rows := []registrationRow{}
		keys := map[string]rowKey{}
		for i, r := range v.Rows {
			r = r.At(at)
			switch {
			case aor != "" && !strings.Contains(strings.ToLower(r.AoR), aor),
				reg != "" && !strings.Contains(strings.ToLower(r.Registrar.String()), reg) && !strings.Contains(strings.ToLower(r.RequestURI), reg),
				in.State != "" && r.State() != string(in.State),
				in.Kind != "" && kinds[i].Kind != string(in.Kind):
				continue
			}
			rows = append(rows, registrationRowOf(r, kinds[i], at))
			// First seen, then the AoR's hash: stable across polls, as
			// rows are never renamed.
			keys[r.AoR] = rowKey{uint64(max(r.FirstSeen.UnixNano(), 0)), aorKey(r.AoR)}
		}
		return pageSlice(c, in.Paging, rows, func(r registrationRow) rowKey { return keys[r.AoR] })
	},
}

// aorKey is a row's hash, the second half of its cursor key.
func aorKey(aor string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(aor))
	return h.Sum64()
}
