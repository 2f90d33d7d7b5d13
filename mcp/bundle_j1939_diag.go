package mcp

import (
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"fieldtap/mcp/untrusted"
	"fieldtap/services/j1939"
)

// j1939DiagTools is the j1939_diag bundle: window views over the stored
// frames of the CAN ports (services/j1939 diag, history, compare,
// topology). Each scans a port's frame ring, so it sees what the ring
// still holds, and says so in its span.
var j1939DiagTools = []toolDef{j1939Diagnostics, j1939SPNHistory, j1939Compare, j1939Topology}

// j1939Window is a window argument as the j1939 views take it.
func j1939Window(sp span) j1939.Window { return j1939.Window{Since: sp.since, Until: sp.until} }

// j1939CANPorts resolves the port argument for a view over frames: the
// CAN ports (a J1939 view reads the frame ring), each with the live
// NAME table for nodes that claimed before the window.
func j1939CANPorts(c *call, sel PortSelector) ([]string, error) {
	ps, err := canPorts(c.d, sel)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = p.Name()
	}
	return names, nil
}

type j1939DiagIn struct {
	PortSelector
	window
}

type j1939DiagOut struct {
	Ports []j1939DiagnosticsRow `json:"ports"`
}

var j1939Diagnostics = tool[j1939DiagIn, j1939DiagOut]{
	name:  "j1939_diagnostics",
	reads: readsJ1939,
	desc: "J1939-73 diagnostics over a window of each CAN port's stored frames: last DM1 (active) and DM2 (previously active) per source with lamps and DTCs, every DTC appearing or leaving, " +
		"and every clear seen on the bus (DM3 previously active, DM11 active): who asked whom, when, the ECU's acknowledgement, and the DTCs before and after. j1939_request_dm plans a clear.",
	hints: readOnly(),
	run: func(c *call, in j1939DiagIn) (j1939DiagOut, error) {
		ports, err := j1939CANPorts(c, in.PortSelector)
		if err != nil {
			return j1939DiagOut{}, err
		}
		sp, err := in.span()
		if err != nil {
			return j1939DiagOut{}, err
		}
		out := j1939DiagOut{Ports: make([]j1939DiagnosticsRow, 0, len(ports))}
		for i, p := range ports {
			c.progress(float64(i), float64(len(ports)), "scanning "+p)
			dg := j1939.DiagnosticsOf(p, c.d.CAN.Lookup(p).Frames(), j1939Window(sp), c.d.J1939.NameOf(p))
			if dg.ChangesTruncated || dg.ClearsTruncated {
				c.warnf("%s: %d DTC changes and %d clears in the window; the lists were cut: narrow since/until", p, dg.ChangesTotal, dg.ClearsTotal)
			}
			out.Ports = append(out.Ports, j1939DiagnosticsRowOf(dg))
		}
		return out, nil
	},
}

// bucketsArg is how many points an SPN history's series gets.
type bucketsArg int

func (bucketsArg) argSchema() *jsonschema.Schema {
	return intSchema(fmt.Sprintf("points in each source's series (min/max/last per bucket), 0 to %d; 0 or absent: statistics only", j1939.MaxHistoryBuckets), 0, j1939.MaxHistoryBuckets)
}

type j1939HistoryIn struct {
	SPN     spnArg         `json:"spn"`
	SA      *sourceAddress `json:"sa,omitempty" jsonschema:"only this source address; omit for every source"`
	Buckets bucketsArg     `json:"buckets,omitempty"`
	PortSelector
	window
}

// j1939ParamRow is a catalogue entry as an answer shows it: a DBC-defined
// SPN's name is the file author's and comes fenced in dbc_name.
type j1939ParamRow struct {
	SPN       uint32         `json:"spn"`
	PGN       uint32         `json:"pgn"`
	Name      string         `json:"name,omitempty"`     // the built-in table's
	DBCName   untrusted.Text `json:"dbc_name,omitempty"` // the DBC signal's
	StartBit  int            `json:"start_bit"`
	Bits      int            `json:"bits"`
	BigEndian bool           `json:"big_endian"`
	Scale     float64        `json:"scale"`
	Offset    float64        `json:"offset"`
	Unit      string         `json:"unit,omitempty"`
	DBCUnit   untrusted.Text `json:"dbc_unit,omitempty"`
	Source    string         `json:"source"` // builtin, or dbc:<database>
}

func j1939ParamRowOf(p j1939.Param) j1939ParamRow {
	r := j1939ParamRow{SPN: p.SPN, PGN: p.PGN, StartBit: p.StartBit, Bits: p.Bits, BigEndian: p.BigEndian, Scale: p.Scale, Offset: p.Offset,
		Unit: p.Unit, DBCUnit: untrusted.Text(p.DBCUnit), Source: p.Source}
	if strings.HasPrefix(p.Source, "dbc:") {
		r.DBCName = untrusted.Text(p.Name)
	} else {
		r.Name = p.Name
	}
	return r
}

type j1939HistoryPort struct {
	Span         j1939SpanRow            `json:"span"`
	Sources      []j1939SourceHistoryRow `json:"sources"`
	BucketMethod string                  `json:"bucket_method,omitempty"`
	BucketWidth  *float64                `json:"bucket_seconds,omitempty"`
}

type j1939HistoryOut struct {
	Param j1939ParamRow      `json:"param"`
	Ports []j1939HistoryPort `json:"ports"`
}

// j1939Param looks spn up in the live catalogue (built-in and the
// loaded J1939 DBCs), refusing one it does not hold.
func j1939Param(d Deps, spn spnArg) (j1939.Param, error) {
	cat := d.J1939.Catalogue()
	p, ok := cat.Lookup(uint32(spn))
	if !ok {
		return j1939.Param{}, notFound("docs/j1939.md lists the built-in SPNs; dbc_load of a J1939 DBC with SPN attributes adds more", "SPN %d is not in the catalogue (%d SPNs)", spn, len(cat.Params()))
	}
	return p, nil
}

var j1939SPNHistory = tool[j1939HistoryIn, j1939HistoryOut]{
	name:  "j1939_spn_history",
	reads: readsJ1939,
	desc: "One SPN over a window of each CAN port's stored frames (transfers reassembled), per source address: messages, valid values, not-available/error/reserved/missing counts, min, max, mean, last and their times, and optionally a bucketed series. " +
		"Any SPN of the catalogue: the built-in table and the loaded J1939 DBCs.",
	hints: readOnly(),
	text:  []textSource{textDBC},
	run: func(c *call, in j1939HistoryIn) (j1939HistoryOut, error) {
		ports, err := j1939CANPorts(c, in.PortSelector)
		if err != nil {
			return j1939HistoryOut{}, err
		}
		sp, err := in.span()
		if err != nil {
			return j1939HistoryOut{}, err
		}
		param, err := j1939Param(c.d, in.SPN)
		if err != nil {
			return j1939HistoryOut{}, err
		}
		q := j1939.HistoryQuery{SPN: uint32(in.SPN), Buckets: int(in.Buckets), Window: j1939Window(sp)}
		if in.SA != nil {
			sa := uint8(*in.SA)
			q.SA = &sa
		}
		cat := c.d.J1939.Catalogue()
		out := j1939HistoryOut{Param: j1939ParamRowOf(param), Ports: make([]j1939HistoryPort, 0, len(ports))}
		for i, p := range ports {
			c.progress(float64(i), float64(len(ports)), "scanning "+p)
			h, err := j1939.SPNHistory(p, c.d.CAN.Lookup(p).Frames(), q, cat)
			if err != nil {
				return j1939HistoryOut{}, argErr("buckets", "ask for fewer buckets", "%v", err)
			}
			out.Ports = append(out.Ports, j1939HistoryPort{Span: j1939SpanRowOf(h.Span), Sources: mapRows(nonNil(h.Sources), j1939SourceHistoryRowOf),
				BucketMethod: h.BucketMethod, BucketWidth: h.BucketWidth})
		}
		return out, nil
	},
}

type j1939CompareIn struct {
	PortSelector
	PortB  portArg `json:"port_b,omitempty" jsonschema:"side B's CAN port (a second capture is a second port); default the same port as side A"`
	SinceA timeArg `json:"since_a,omitempty" jsonschema:"side A from this RFC 3339 time (default the oldest stored frame)"`
	UntilA timeArg `json:"until_a,omitempty" jsonschema:"side A before this RFC 3339 time"`
	SinceB timeArg `json:"since_b,omitempty" jsonschema:"side B from this RFC 3339 time"`
	UntilB timeArg `json:"until_b,omitempty" jsonschema:"side B before this RFC 3339 time (default the newest)"`
}

// j1939OnePort resolves a port argument that names one CAN port: empty
// is the only one, refused with the list when there are several.
func j1939OnePort(c *call, arg string, p portArg) (string, error) {
	ports, err := j1939CANPorts(c, PortSelector{Port: p})
	if err != nil {
		return "", err
	}
	if len(ports) != 1 {
		return "", argErr(arg, "name one CAN port", "this box has %d CAN ports (%s): name one", len(ports), strings.Join(ports, ", "))
	}
	return ports[0], nil
}

var j1939Compare = tool[j1939CompareIn, j1939ComparisonRow]{
	name:  "j1939_compare",
	reads: readsJ1939,
	desc:  "Compare two windows of stored frames (one port at two times, or two ports such as two captures) per PGN and source: frame rates, pairs new, vanished and changed past a 1.25× rate ratio, CAN ids and sources seen on one side only, and DTCs that differ between the last DM1/DM2 of each source.",
	hints: readOnly(),
	run: func(c *call, in j1939CompareIn) (j1939ComparisonRow, error) {
		a, err := j1939OnePort(c, "port", in.Port)
		if err != nil {
			return j1939ComparisonRow{}, err
		}
		b := a
		if in.PortB != "" {
			if b, err = j1939OnePort(c, "port_b", in.PortB); err != nil {
				return j1939ComparisonRow{}, err
			}
		}
		spA, err := window{Since: in.SinceA, Until: in.UntilA}.span()
		if err != nil {
			return j1939ComparisonRow{}, err
		}
		spB, err := window{Since: in.SinceB, Until: in.UntilB}.span()
		if err != nil {
			return j1939ComparisonRow{}, err
		}
		if a == b && spA == spB {
			c.warnf("both sides are the same frames of %s: give since_a/until_a and since_b/until_b, or port_b", a)
		}
		cmp := j1939.Compare(j1939.Side{Port: a, Frames: c.d.CAN.Lookup(a).Frames(), Window: j1939Window(spA)},
			j1939.Side{Port: b, Frames: c.d.CAN.Lookup(b).Frames(), Window: j1939Window(spB)})
		if cmp.RowsTruncated {
			c.warnf("rows list the first %d pairs, changes first; the pair counts are whole", len(cmp.Rows))
		}
		return j1939ComparisonRowOf(cmp), nil
	},
}

type j1939TopologyOut struct {
	Ports []j1939TopologyRow `json:"ports"`
}

var j1939Topology = tool[j1939DiagIn, j1939TopologyOut]{
	name:  "j1939_topology",
	reads: readsJ1939,
	desc:  "The bus as a graph over a window of each CAN port's stored frames: nodes (source addresses with their claimed NAME, frames, PGNs sent, first/last seen, claim conflicts) and edges (requests and transport transfers: who, to whom, which PGN, how many, how they ended).",
	hints: readOnly(),
	run: func(c *call, in j1939DiagIn) (j1939TopologyOut, error) {
		ports, err := j1939CANPorts(c, in.PortSelector)
		if err != nil {
			return j1939TopologyOut{}, err
		}
		sp, err := in.span()
		if err != nil {
			return j1939TopologyOut{}, err
		}
		out := j1939TopologyOut{Ports: make([]j1939TopologyRow, 0, len(ports))}
		for i, p := range ports {
			c.progress(float64(i), float64(len(ports)), "scanning "+p)
			tp := j1939.TopologyOf(p, c.d.CAN.Lookup(p).Frames(), j1939Window(sp), c.d.J1939.NameOf(p))
			if tp.EdgeOverflow > 0 {
				c.warnf("%s: %d events found the edge table full and are in no edge", p, tp.EdgeOverflow)
			}
			out.Ports = append(out.Ports, j1939TopologyRowOf(tp))
		}
		return out, nil
	},
}
