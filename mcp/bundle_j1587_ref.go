package mcp

import (
	"slices"

	"github.com/google/jsonschema-go/jsonschema"

	"fieldtap/services/j1587"
)

// j1587RefTools is the j1587_ref bundle: the PID and MID tables the J1587
// decoder reads (services/j1587), so an agent can name what a message
// carries before any traffic arrives.
var j1587RefTools = []toolDef{j1587PIDs, j2497MIDs}

type j1587KindArg string

// argSchema offers the kinds the decoder's table holds.
func (j1587KindArg) argSchema() *jsonschema.Schema {
	var kinds []string
	for _, p := range j1587.PIDs() {
		if !slices.Contains(kinds, p.Kind) {
			kinds = append(kinds, p.Kind)
		}
	}
	slices.Sort(kinds)
	return enumArg("only PIDs of this kind", kinds)
}

type j1587PIDsIn struct {
	PID  *pidArg      `json:"pid,omitempty" jsonschema:"only this PID (page 2 as 256 + PID)"`
	Kind j1587KindArg `json:"kind,omitempty"`
}

type j1587PIDsOut struct {
	Total int              `json:"pids_known"` // the whole table, whatever the filter
	PIDs  []j1587PIDRefRow `json:"pids"`
}

// j1587PIDRefRow is one PID of the decoder's table.
type j1587PIDRefRow struct {
	PID  uint16 `json:"pid"`
	Page int    `json:"page"` // 1, or 2 for PIDs sent after the 255 prefix
	Name string `json:"name"`
	Kind string `json:"kind"` // number, bits, text, faults, multisection, request
	// Length is how the PID's number fixes its data length (J1587 §A.1):
	// one byte, two bytes, a length byte, or the rest of the message.
	Length string `json:"length"`
	// ValueBytes is what a number, bit field or request reads.
	ValueBytes int      `json:"value_bytes,omitempty"`
	Signed     bool     `json:"signed,omitempty"`
	Scale      *float64 `json:"scale"` // null when the PID has no single number
	Unit       string   `json:"unit,omitempty"`
}

var j1587PIDs = tool[j1587PIDsIn, j1587PIDsOut]{
	name:  "j1587_pids",
	reads: readsNothing,
	desc: "The J1587 PIDs the decoder knows, from the table it decodes with: page, name, kind (number, bits, text, faults, multisection, request), how the PID fixes its data length, value bytes, signedness, scale and unit. " +
		"j1587_parameters shows their values on the bus.",
	hints: readOnly(),
	run: func(c *call, in j1587PIDsIn) (j1587PIDsOut, error) {
		all := j1587.PIDs()
		out := j1587PIDsOut{Total: len(all), PIDs: []j1587PIDRefRow{}}
		for _, p := range all {
			if (in.PID == nil || int(p.PID) == int(*in.PID)) && (in.Kind == "" || p.Kind == string(in.Kind)) {
				out.PIDs = append(out.PIDs, j1587PIDRefRow(p))
			}
		}
		if in.PID != nil && len(out.PIDs) == 0 {
			return j1587PIDsOut{}, notFound("omit pid to list every PID the decoder knows", "PID %d is not in the decoder's table (%d PIDs)", *in.PID, len(all))
		}
		return out, nil
	},
}

type j2497MIDsIn struct {
	All bool `json:"all,omitempty" jsonschema:"list every J1587 MID 128 to 255 with its j2497 flag, not only the trailer (J2497) ones"`
}

type j2497MIDsOut struct {
	MIDs []j1587MIDRefRow `json:"mids"`
}

// j1587MIDRefRow is one MID of the decoder's table.
type j1587MIDRefRow struct {
	MID  uint8  `json:"mid"`
	Name string `json:"name"` // "" for a reserved or reclaimed MID
	// J2497 marks the MIDs of trailer equipment and the tractor/trailer
	// gateways: the units that speak on the J2497 power-line link.
	J2497 bool `json:"j2497"`
}

func j1587MIDRefRowOf(m j1587.MIDInfo) j1587MIDRefRow { return j1587MIDRefRow(m) }

var j2497MIDs = tool[j2497MIDsIn, j2497MIDsOut]{
	name:  "j2497_mids",
	reads: readsNothing,
	desc:  "The MIDs of units on the J2497 (PLC4TRUCKS) tractor-trailer power-line link, from the MID table the J1587 decoder names sources with; all=true lists every J1587 MID 128..255 with its name (empty when reserved) and j2497 flag.",
	hints: readOnly(),
	run: func(c *call, in j2497MIDsIn) (j2497MIDsOut, error) {
		if in.All {
			return j2497MIDsOut{MIDs: mapRows(j1587.MIDs(), j1587MIDRefRowOf)}, nil
		}
		return j2497MIDsOut{MIDs: mapRows(j1587.J2497MIDs(), j1587MIDRefRowOf)}, nil
	},
}
