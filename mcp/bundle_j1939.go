package mcp

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"fieldtap/mcp/untrusted"
	"fieldtap/services/j1939"
)

// j1939Tools is the j1939 bundle.
var j1939Tools = []toolDef{j1939Summary, j1939Inventory, j1939Faults, j1939PGN, j1939SPN, j1939TPSessions, j1939Requests}

// j1939IdentPGNs carry text (VIN, component and software id): their
// payload gets a fenced printable view beside the raw hex.
var j1939IdentPGNs = map[uint32]bool{j1939.PGNVIN: true, j1939.PGNComponentID: true, j1939.PGNSoftwareID: true}

// j1939Ports resolves the port argument against the ports the J1939 store
// has seen; the index of each chosen port is its place among them.
func j1939Ports(d Deps, sel PortSelector) (chosen []string, index map[string]uint64, err error) {
	all := d.J1939.Ports()
	index = map[string]uint64{}
	for i, n := range all {
		index[n] = uint64(i)
	}
	chosen, err = choosePorts(sel, "J1939", all, func(n string) string { return n })
	return chosen, index, err
}

// onPorts keeps the rows whose port was chosen.
func onPorts[R any](rows []R, chosen []string, port func(R) string) []R {
	return slices.DeleteFunc(rows, func(r R) bool { return !slices.Contains(chosen, port(r)) })
}

type j1939PortIn struct {
	PortSelector
}

type j1939SummaryOut struct {
	Ports []j1939SummaryRow `json:"ports"`
}

var j1939Summary = tool[j1939PortIn, j1939SummaryOut]{
	name:  "j1939_summary",
	reads: readsJ1939,
	desc:  "J1939 overview per CAN port: frames, source addresses, top PGNs, TP.CM counts and session outcomes, requests, address claims and conflicts, DM1 sources and active DTC count. Start here on a truck bus.",
	hints: readOnly(),
	run: func(c *call, in j1939PortIn) (j1939SummaryOut, error) {
		chosen, _, err := j1939Ports(c.d, in.PortSelector)
		if err != nil {
			return j1939SummaryOut{}, err
		}
		return j1939SummaryOut{Ports: mapRows(onPorts(c.d.J1939.Summary(), chosen, func(p j1939.PortSummary) string { return p.Port }), j1939SummaryRowOf)}, nil
	},
}

type j1939ListIn struct {
	PortSelector
	Paging
	Projection
}

var j1939Inventory = tool[j1939ListIn, page[j1939InventoryRow]]{
	name:  "j1939_inventory",
	reads: readsJ1939,
	desc:  "ECUs per port from address claims and traffic, by port then source address: first/last seen, frames, decoded NAME (identity, manufacturer, function, industry group, instances, arbitrary-address capable), claim conflicts, DM1 lamps. Paged.",
	hints: readOnly(),
	ids:   []string{"port", "sa"},
	run: func(c *call, in j1939ListIn) (page[j1939InventoryRow], error) {
		chosen, index, err := j1939Ports(c.d, in.PortSelector)
		if err != nil {
			return page[j1939InventoryRow]{}, err
		}
		rows := mapRows(onPorts(c.d.J1939.Inventory(), chosen, func(r j1939.InventoryRow) string { return r.Port }), j1939InventoryRowOf)
		return pageSlice(c, in.Paging, rows, func(r j1939InventoryRow) rowKey { return rowKey{index[r.Port], uint64(r.SA)} })
	},
}

var j1939Faults = tool[j1939ListIn, page[j1939FaultRow]]{
	name:  "j1939_faults",
	reads: readsJ1939,
	desc: "Each DTC in a source's DM1 (active) or DM2 (previously active), by port, kind, sa, spn, fmi: ecu name, spn_name, fmi_text, oc, " +
		"first_seen/last_seen and messages (DMs with it), listed (in the latest DM) and its lamps (0 off, 1 on, 2 error, 3 n/a). " +
		"SPN 0/FMI 0 (no active DTC) gets no row. Paged.",
	hints: readOnly(),
	ids:   []string{"port", "sa", "kind", "spn", "fmi"},
	run: func(c *call, in j1939ListIn) (page[j1939FaultRow], error) {
		chosen, index, err := j1939Ports(c.d, in.PortSelector)
		if err != nil {
			return page[j1939FaultRow]{}, err
		}
		cat := c.d.J1939.Catalogue()
		codes := onPorts(c.d.J1939.FaultCodes(), chosen, func(r j1939.FaultCode) string { return r.Port })
		rows := mapRows(codes, func(f j1939.FaultCode) j1939FaultRow { return j1939FaultRowOf(c, cat, f) })
		return pageSlice(c, in.Paging, rows, func(r j1939FaultRow) rowKey {
			kind := uint64(0)
			if r.Kind == "DM2" {
				kind = 1
			}
			// port (MaxPorts) | kind | sa, then spn (19 bits) | fmi (5 bits)
			return rowKey{index[r.Port]<<9 | kind<<8 | uint64(r.SA), uint64(r.SPN)<<5 | uint64(r.FMI)}
		})
	},
}

type j1939PGNIn struct {
	PGN pgnArg         `json:"pgn"`
	SA  *sourceAddress `json:"sa,omitempty" jsonschema:"only this source address; omit for every source"`
	PortSelector
}

// j1939SPNValue is one decoded SPN of a payload. A parameter from an
// operator's DBC has its signal name (the file author's text) fenced in
// dbc_name; a built-in one has its name in name.
type j1939SPNValue struct {
	SPN     uint32         `json:"spn"`
	Name    string         `json:"name,omitempty"`
	DBCName untrusted.Text `json:"dbc_name,omitempty"`
	Value   *float64       `json:"value"` // null unless status is ok
	Unit    string         `json:"unit"`
	DBCUnit untrusted.Text `json:"dbc_unit,omitempty"`
	Status  string         `json:"status"`
	Raw     uint32         `json:"raw"`
	Source  string         `json:"source"` // builtin, or dbc:<database>
}

type j1939PGNRow struct {
	Port  string          `json:"port"`
	SA    int             `json:"sa"`
	PGN   uint32          `json:"pgn"`
	Name  string          `json:"name"`
	Time  time.Time       `json:"time"`
	Via   string          `json:"via"`
	Count uint64          `json:"count"`
	Data  string          `json:"data"` // hex
	SPNs  []j1939SPNValue `json:"spns"`
	// Text is the printable view of a VIN, component or software id
	// payload (non-printable bytes as '.'); null for other PGNs.
	Text *untrusted.Text `json:"text"`
}

// j1939SPNValueOf spells one decoded SPN, fencing a DBC-defined name and
// telling the call a DBC's author wrote part of the answer.
func j1939SPNValueOf(c *call, cat *j1939.Catalogue, v j1939.SPNOut) j1939SPNValue {
	out := j1939SPNValue{SPN: v.SPN, Name: v.Name, Value: v.Value, Unit: v.Unit, DBCUnit: untrusted.Text(v.DBCUnit), Status: v.Status, Raw: v.Raw, Source: j1939.SourceBuiltin}
	if p, ok := cat.Lookup(v.SPN); ok && p.Source != j1939.SourceBuiltin {
		out.Name, out.DBCName, out.Source = "", untrusted.Text(v.Name), p.Source
		c.text = append(c.text, textDBC)
	}
	return out
}

type j1939PGNOut struct {
	PGN     int           `json:"pgn"`
	Name    string        `json:"name"`
	Sources []j1939PGNRow `json:"sources"`
}

var j1939PGN = tool[j1939PGNIn, j1939PGNOut]{
	name:  "j1939_pgn",
	reads: readsJ1939,
	desc: "Latest payload of one PGN per source and port, with its catalogue SPNs decoded (value null unless status is ok, unit, status; DBC-defined names fenced). " +
		"VIN, component and software id payloads also get a fenced printable view; the hex is the truth.",
	hints: readOnly(),
	run: func(c *call, in j1939PGNIn) (j1939PGNOut, error) {
		chosen, _, err := j1939Ports(c.d, in.PortSelector)
		if err != nil {
			return j1939PGNOut{}, err
		}
		pgn := uint32(in.PGN)
		out := j1939PGNOut{PGN: int(in.PGN), Name: j1939.PGNName(pgn), Sources: []j1939PGNRow{}}
		cat := c.d.J1939.Catalogue()
		answered := false // a source was answered: say which definitions decoded it
		for _, v := range c.d.J1939.LatestPGN(pgn) {
			if !slices.Contains(chosen, v.Port) || in.SA != nil && v.SA != int(*in.SA) {
				continue
			}
			row := j1939PGNRow{Port: v.Port, SA: v.SA, PGN: v.PGN, Name: v.Name, Time: v.Time, Via: v.Via, Count: v.Count, Data: v.Data,
				SPNs: make([]j1939SPNValue, len(v.Values))}
			for i, o := range v.Values {
				row.SPNs[i] = j1939SPNValueOf(c, cat, o)
			}
			answered = true
			if j1939IdentPGNs[pgn] {
				txt := untrusted.PrintableASCII(v.Raw)
				row.Text = &txt
				c.text = append(c.text, textJ1939)
			}
			out.Sources = append(out.Sources, row)
		}
		if answered {
			for _, p := range cat.Of(pgn) {
				if p.Replaces != "" {
					c.warnf("%s: the values above are the latest payload decoded with it; j1939_spn %d decodes with it the samples that arrived since it was loaded, and its rows' source says which definition decoded each sample",
						j1939Override(p), p.SPN)
				}
			}
		}
		return out, nil
	},
}

// j1939Override says which DBC definition replaces another for an SPN:
// both j1939_pgn and j1939_spn name it, so their values can be compared.
func j1939Override(p j1939.Param) string {
	order := "little-endian"
	if p.BigEndian {
		order = "big-endian"
	}
	return fmt.Sprintf("SPN %d of PGN %d is decoded with %s (file %s, message %s: start bit %d, %d bits %s, ×%g %+g), replacing the %s definition",
		p.SPN, p.PGN, p.Source, p.File, p.Message, p.StartBit, p.Bits, order, p.Scale, p.Offset, p.Replaces)
}

type j1939SPNIn struct {
	SPN spnArg         `json:"spn"`
	SA  *sourceAddress `json:"sa,omitempty" jsonschema:"only this source address; omit for every source"`
	PortSelector
	window
	Paging
	Projection
}

type j1939SPNRow struct {
	Seq   uint64    `json:"seq"`
	Port  string    `json:"port"`
	Time  time.Time `json:"time"`
	SA    int       `json:"sa"`
	Value *float64  `json:"value"` // null unless status is ok
	Unit  string    `json:"unit"`
	// DBCUnit is the unit of an SPN from an operator's DBC (fenced).
	DBCUnit untrusted.Text `json:"dbc_unit,omitempty"`
	Status  string         `json:"status"`
	Raw     uint32         `json:"raw"`
	// Source is the definition that decoded the sample when it arrived:
	// builtin, or dbc:<database>.
	Source string `json:"source"`
}

var j1939SPN = tool[j1939SPNIn, page[j1939SPNRow]]{
	name:  "j1939_spn",
	reads: readsJ1939,
	desc:  "Time series of one SPN of the catalogue (the built-in table, docs/j1939.md, and the loaded J1939 DBCs: 190 engine speed, 84 wheel speed, …), oldest first, over every port or one; value is null unless status is ok. Paged.",
	hints: readOnly(),
	ids:   []string{"seq"},
	text:  []textSource{textDBC},
	run: func(c *call, in j1939SPNIn) (page[j1939SPNRow], error) {
		chosen, _, err := j1939Ports(c.d, in.PortSelector)
		if err != nil {
			return page[j1939SPNRow]{}, err
		}
		spn := uint32(in.SPN)
		param, known := c.d.J1939.Catalogue().Lookup(spn)
		if !known {
			return page[j1939SPNRow]{}, argErr("spn", "docs/j1939.md lists the built-in SPNs; dbc_load of a J1939 DBC with SPN attributes adds more; j1939_pgn shows raw payloads", "SPN %d is not in the catalogue", spn)
		}
		sp, err := in.span()
		if err != nil {
			return page[j1939SPNRow]{}, err
		}
		samples := c.d.J1939.Samples()
		ports := c.d.J1939.Ports() // after the snapshot: it names every port a sample has
		sources := c.d.J1939.Sources()
		bySource := map[string]int{}
		keep := func(v j1939.Sample) bool {
			ok := v.SPN == spn && (in.SA == nil || int(v.SA) == int(*in.SA)) && slices.Contains(chosen, v.Port(ports)) && sp.holds(v.Time())
			if ok {
				bySource[v.Source(sources)]++
			}
			return ok
		}
		out, err := pageRing(c, in.Paging, samples, "samples", keep, func(seq uint64, v j1939.Sample) j1939SPNRow {
			o := v.Decoded().Out("")
			return j1939SPNRow{Seq: seq, Port: v.Port(ports), Time: v.Time(), SA: int(v.SA), Value: o.Value, Unit: o.Unit, DBCUnit: untrusted.Text(param.DBCUnit), Status: o.Status, Raw: o.Raw,
				Source: v.Source(sources)}
		})
		if err == nil && (param.Replaces != "" || len(bySource) > 1) {
			now := "SPN " + strconv.FormatUint(uint64(spn), 10) + " is decoded with " + param.Source
			if param.Replaces != "" {
				now = j1939Override(param)
			}
			c.warnf("%s; a sample keeps the definition that decoded it when it arrived (rows: %s), and j1939_pgn decodes the latest payload with the current one",
				now, j1939SourceCounts(bySource))
		}
		return out, err
	},
}

// j1939SourceCounts spells matched samples by source, sorted.
func j1939SourceCounts(n map[string]int) string {
	var b strings.Builder
	for i, src := range slices.Sorted(maps.Keys(n)) {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%d by %s", n[src], src)
	}
	return b.String()
}

// tpStatusArg is a TP session status, from the j1939 package's names.
type tpStatusArg string

func (tpStatusArg) argSchema() *jsonschema.Schema {
	return enumArg("only sessions with this status", j1939.TPStatusNames())
}

type j1939TPIn struct {
	Status tpStatusArg    `json:"status,omitempty"`
	SA     *sourceAddress `json:"sa,omitempty" jsonschema:"only sessions sent by this source address"`
	PortSelector
	Paging
	Projection
}

type j1939TPRow struct {
	Port        string    `json:"port"`
	ID          uint64    `json:"id"` // the port's announcement number: stable from open to end
	Kind        string    `json:"kind"`
	Status      string    `json:"status"`
	SA          int       `json:"sa"`
	DA          int       `json:"da"`
	PGN         uint32    `json:"pgn"`
	PGNName     string    `json:"pgn_name"`
	Size        int       `json:"size"`
	Packets     int       `json:"packets"`
	Received    int       `json:"received"`
	AbortReason *int      `json:"abort_reason"` // null unless aborted
	Start       time.Time `json:"start"`
	End         time.Time `json:"end"`
}

var j1939TPSessions = tool[j1939TPIn, page[j1939TPRow]]{
	name:  "j1939_tp_sessions",
	reads: readsJ1939,
	desc: "Transport-protocol sessions (BAM and RTS/CTS) by port, then in announcement order (id), ended and still open alike: SA, DA, transferred PGN, size, packets announced and received, " +
		"status (complete, aborted with reason, timed_out per J1939-21, superseded, refused by the session bound, open). A session keeps its id while it closes, so paging is stable. Paged.",
	hints: readOnly(),
	ids:   []string{"port", "id"},
	run: func(c *call, in j1939TPIn) (page[j1939TPRow], error) {
		chosen, index, err := j1939Ports(c.d, in.PortSelector)
		if err != nil {
			return page[j1939TPRow]{}, err
		}
		var recs []j1939.SessionRecord
		c.d.J1939.Sessions().Range(0, func(_ uint64, r j1939.SessionRecord) bool {
			recs = append(recs, r)
			return true
		})
		recs = append(recs, c.d.J1939.OpenSessions()...)
		recs = slices.DeleteFunc(recs, func(r j1939.SessionRecord) bool {
			return !slices.Contains(chosen, r.Port) || in.Status != "" && r.Status.String() != string(in.Status) || in.SA != nil && int(r.SA) != int(*in.SA)
		})
		p, err := pageSlice(c, in.Paging, recs, func(r j1939.SessionRecord) rowKey { return rowKey{index[r.Port], r.ID} })
		if err != nil {
			return page[j1939TPRow]{}, err
		}
		rows := make([]j1939TPRow, len(p.Items))
		for i, r := range p.Items {
			rows[i] = j1939TPRowOf(r)
		}
		return page[j1939TPRow]{Items: rows, Page: p.Page}, nil
	},
}

func j1939TPRowOf(r j1939.SessionRecord) j1939TPRow {
	row := j1939TPRow{Port: r.Port, ID: r.ID, Kind: r.Kind.String(), Status: r.Status.String(), SA: int(r.SA), DA: int(r.DA),
		PGN: r.PGN, PGNName: j1939.PGNName(r.PGN), Size: r.Size, Packets: r.Packets, Received: r.Received, Start: r.Start, End: r.End}
	if r.Status == j1939.TPAborted {
		a := int(r.AbortReason)
		row.AbortReason = &a
	}
	return row
}

type j1939RequestsOut struct {
	Ports []j1939RequestsRow `json:"ports"`
}

var j1939Requests = tool[j1939PortIn, j1939RequestsOut]{
	name:  "j1939_requests",
	reads: readsJ1939,
	desc:  "Requests (PGN 59904) per port: the total count and each requested PGN with its count, most requested first.",
	hints: readOnly(),
	run: func(c *call, in j1939PortIn) (j1939RequestsOut, error) {
		chosen, _, err := j1939Ports(c.d, in.PortSelector)
		if err != nil {
			return j1939RequestsOut{}, err
		}
		return j1939RequestsOut{Ports: mapRows(onPorts(c.d.J1939.Requests(), chosen, func(p j1939.PortRequests) string { return p.Port }), j1939RequestsRowOf)}, nil
	},
}
