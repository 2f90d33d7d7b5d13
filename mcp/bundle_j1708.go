package mcp

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"fieldtap/drivers/wire"
	"fieldtap/mcp/untrusted"
	"fieldtap/services/j1587"
)

// j1708Tools is the j1708 bundle: raw J1708/J2497 messages, the J1587
// decode (summary, parameters, fault codes) and the log export.
var j1708Tools = []toolDef{j1708Messages, j1587Summary, j1587Parameters, j1587Faults, exportJ1708Log}

// portKindJ1708 is the kind capture_status gives a J1708 port.
const portKindJ1708 = "j1708"

// j1708Source is one J1708 port's traffic as the j1708 tools read it:
// the key of its rows (its place among the box's J1708 ports, stable
// because ports are only added), its name, and its store.
type j1708Source struct {
	index uint64
	port  string
	store *j1587.Port
}

// j1708Sources resolves the port argument against the box's J1708 ports
// (capture_status's ports of kind j1708): one source per chosen port,
// each its own ring and tables.
func j1708Sources(c *call, sel PortSelector) ([]j1708Source, error) {
	var names []string
	for _, p := range c.d.Ports.Snapshot() {
		if p.Kind == portKindJ1708 {
			names = append(names, p.Name)
		}
	}
	if len(names) == 0 {
		return nil, unavailable("J1708 port", "capture_status lists the ports this box has; a J1708 port is a [[port]] with driver j1708 or a J1708 log as --source")
	}
	chosen, err := choosePorts(sel, "J1708", names, func(n string) string { return n })
	if err != nil {
		return nil, err
	}
	var out []j1708Source
	for i, n := range names {
		if !slices.Contains(chosen, n) {
			continue
		}
		if p := c.d.J1587.Lookup(n); p != nil {
			out = append(out, j1708Source{index: uint64(i), port: n, store: p})
		}
	}
	return out, nil
}

// j1708Rings is each source's message ring, for pagePortRings.
func j1708Rings(srcs []j1708Source) []portRing[j1587.Record] {
	out := make([]portRing[j1587.Record], len(srcs))
	for i, s := range srcs {
		out[i] = portRing[j1587.Record]{index: s.index, name: s.port, snap: s.store.Messages()}
	}
	return out
}

// j1708Select is what j1708_messages and export_j1708log select by.
type j1708Select struct {
	MID *midArg `json:"mid,omitempty" jsonschema:"only messages from this MID, 0 to 255; omit for every MID"`
	PID *pidArg `json:"pid,omitempty" jsonschema:"only messages carrying this J1587 PID, 0 to 511 (page 2 as 256 + PID); omit for every message"`
	window
}

// selector is the services' matcher for s; j1587.Selection decides.
func (s j1708Select) selector() (*j1587.Selector, error) {
	sp, err := s.span()
	if err != nil {
		return nil, err
	}
	sel := j1587.Selection{Since: sp.since, Until: sp.until}
	if s.MID != nil {
		m := byte(*s.MID)
		sel.MID = &m
	}
	if s.PID != nil {
		p := uint16(*s.PID)
		sel.PID = &p
	}
	return sel.Selector(), nil
}

// pageJ1708 pages the selected messages of the chosen ports, port by port
// and each oldest first, keyed (port, seq).
func pageJ1708[R any](c *call, in j1708ListIn, row func(port string, seq uint64, r *j1587.Record) R) (page[R], error) {
	srcs, err := j1708Sources(c, in.PortSelector)
	if err != nil {
		return page[R]{}, err
	}
	m, err := in.selector()
	if err != nil {
		return page[R]{}, err
	}
	return pagePortRings(c, in.Paging, j1708Rings(srcs), "messages",
		func(_ string, r j1587.Record) bool { return m.Match(&r) },
		func(port string, seq uint64, r j1587.Record) R { return row(port, seq, &r) })
}

type j1708ListIn struct {
	PortSelector
	j1708Select
	Paging
	Projection
}

type j1708MessageRow struct {
	Port string    `json:"port"`
	Seq  uint64    `json:"seq"`
	Time time.Time `json:"time"`
	// MID is null only for an empty message (status bad_length).
	MID    *int   `json:"mid"`
	Data   string `json:"data" jsonschema:"the message in hex, MID through checksum"`
	Length int    `json:"length"`
	J2497  bool   `json:"j2497" jsonschema:"a J2497 (PLC4TRUCKS) trailer power-line message"`
	Status string `json:"status" jsonschema:"ok, bad_checksum, bad_length, j1708_reserved_mid, truncated_parameter or bad_page_extension"`
	PIDs   []int  `json:"pids" jsonschema:"the J1587 PIDs it carries, page 2 as 256 + PID; empty when it does not decode"`
}

var j1708Messages = tool[j1708ListIn, page[j1708MessageRow]]{
	name:  "j1708_messages",
	reads: readsJ1708,
	desc: "Raw J1708/J2497 messages, port by port and each oldest first: time, MID, hex bytes with checksum, status (ok, bad_checksum, …) and the J1587 PIDs each carries. " +
		"Filter by mid, pid (the message carries it) and since/until; empty port means every J1708 port. Paged.",
	hints: readOnly(),
	ids:   []string{"port", "seq"},
	run: func(c *call, in j1708ListIn) (page[j1708MessageRow], error) {
		var dec j1587.Decoder
		return pageJ1708(c, in, func(port string, seq uint64, r *j1587.Record) j1708MessageRow {
			row := j1708MessageRow{Port: port, Seq: seq, Time: r.Time, Data: fmt.Sprintf("%X", r.Msg()), Length: int(r.Len),
				J2497: r.J2497, Status: r.Status.String(), PIDs: r.PIDs(&dec)}
			if r.Len > 0 {
				mid := int(r.Bytes[0])
				row.MID = &mid
			}
			return row
		})
	},
}

// j1708LogRow is one stored message as a J1708 log line.
type j1708LogRow struct {
	Port string `json:"port"`
	Seq  uint64 `json:"seq"`
	// Line is one J1708 log line (no newline), as fieldtapd --source reads.
	Line string `json:"line"`
}

var exportJ1708Log = tool[j1708ListIn, page[j1708LogRow]]{
	name:  "export_j1708log",
	reads: readsJ1708,
	desc: "Stored J1708 messages as J1708 log lines, `(1.688000) j1708 80020028…F4` (`j2497` for trailer messages), that fieldtapd --source reads back; " +
		"port by port, each oldest first, selected like j1708_messages; paged like it: follow next_cursor for the rest.",
	hints: readOnly(),
	ids:   []string{"port", "seq"},
	run: func(c *call, in j1708ListIn) (page[j1708LogRow], error) {
		var buf []byte
		return pageJ1708(c, in, func(port string, seq uint64, r *j1587.Record) j1708LogRow {
			buf = wire.AppendJ1708Line(buf[:0], r.Time, r.J2497, r.Msg())
			return j1708LogRow{Port: port, Seq: seq, Line: string(buf[:len(buf)-1])}
		})
	},
}

type j1708PortIn struct {
	PortSelector
}

// j1587PortSummary is one J1708 port's counters.
type j1587PortSummary struct {
	Port        string               `json:"port"`
	Messages    uint64               `json:"messages"`
	ChecksumOK  uint64               `json:"checksum_ok"`
	ChecksumBad uint64               `json:"checksum_bad"` // bad checksum or length
	ByStatus    map[string]uint64    `json:"by_status"`
	J2497       uint64               `json:"j2497"`
	MIDs        []j1587MIDSummaryRow `json:"mids"`
	Stored      ringStatsRow         `json:"stored"`
	Overflow    j1587OverflowRow     `json:"overflow"`
}

func j1587PortSummaryOf(port string, s j1587.Summary) j1587PortSummary {
	return j1587PortSummary{Port: port, Messages: s.Messages, ChecksumOK: s.ChecksumOK, ChecksumBad: s.ChecksumBad, ByStatus: s.ByStatus,
		J2497: s.J2497, MIDs: mapRows(s.MIDs, func(m j1587.MIDSummary) j1587MIDSummaryRow { return j1587MIDSummaryRow(m) }),
		Stored: ringStatsRowOf(s.Stored), Overflow: j1587OverflowRow(s.Overflow)}
}

// j1587MIDSummaryRow is one sender on a J1708 port.
type j1587MIDSummaryRow struct {
	MID          int        `json:"mid"`
	Name         string     `json:"name"`
	Messages     uint64     `json:"messages"`
	ChecksumBad  uint64     `json:"checksum_bad"`
	DecodeErrors uint64     `json:"decode_errors"`
	J2497        uint64     `json:"j2497"`
	First        time.Time  `json:"first_time"`
	Last         time.Time  `json:"last_time"`
	PIDs         int        `json:"pids"`
	ActiveFaults int        `json:"active_faults"`
	FaultTable   *time.Time `json:"fault_table_time"` // last PID 194; null when none seen
	// RatePerSecond is messages per second over first..last, null with
	// rate_null_reason when there is no basis (fewer than two messages).
	RatePerSecond  *float64 `json:"rate_per_second"`
	RateBasis      string   `json:"rate_basis,omitempty"`
	RateNullReason string   `json:"rate_null_reason,omitempty"`
}

// j1587OverflowRow counts what the J1587 tables could not track.
type j1587OverflowRow struct {
	Latest         uint64 `json:"latest"`             // (MID, PID) pairs not tracked
	Faults         uint64 `json:"faults"`             // fault entries not tracked
	Assemblies     uint64 `json:"assemblies"`         // PID 192 parameters not reassembled
	SectionErrors  uint64 `json:"section_errors"`     // sections out of order or too long
	FaultTableErrs uint64 `json:"fault_table_errors"` // PID 194 tables with a partial entry
}

type j1587SummaryOut struct {
	Ports []j1587PortSummary `json:"ports"`
}

var j1587Summary = tool[j1708PortIn, j1587SummaryOut]{
	name:  "j1587_summary",
	reads: readsJ1708,
	desc: "J1708/J1587 overview per J1708 port: messages, valid and bad checksums, decode errors by status, J2497 count, and per MID (with its J1587 name) messages, checksum errors, " +
		"rate with its basis, PIDs seen, active faults and when it last sent a fault table; plus the message ring's fill and evictions and every table's overflow. Start here on a J1708 bus.",
	hints: readOnly(),
	run: func(c *call, in j1708PortIn) (j1587SummaryOut, error) {
		srcs, err := j1708Sources(c, in.PortSelector)
		if err != nil {
			return j1587SummaryOut{}, err
		}
		out := j1587SummaryOut{Ports: make([]j1587PortSummary, 0, len(srcs))}
		for _, s := range srcs {
			out.Ports = append(out.Ports, j1587PortSummaryOf(s.port, s.store.Summary()))
		}
		return out, nil
	},
}

type j1587MIDIn struct {
	MID *midArg `json:"mid,omitempty" jsonschema:"only this MID, 0 to 255; omit for every MID"`
	PortSelector
	Paging
	Projection
}

// mid is the services' MID selector: j1587.Any or one MID.
func (in j1587MIDIn) mid() int {
	if in.MID == nil {
		return j1587.Any
	}
	return int(*in.MID)
}

type j1587ParamRow struct {
	Port   string    `json:"port"`
	MID    int       `json:"mid"`
	PID    int       `json:"pid"`
	Name   string    `json:"name" jsonschema:"the PID's name; empty for a PID this build does not define"`
	Kind   string    `json:"kind" jsonschema:"number, bits, text, faults, multisection, request or raw"`
	Value  *float64  `json:"value" jsonschema:"null unless status is ok"`
	Unit   string    `json:"unit"`
	Status string    `json:"status" jsonschema:"ok, not_available (all 0xFF), short or no_number"`
	Raw    string    `json:"raw" jsonschema:"the value bytes in hex"`
	Time   time.Time `json:"time"`
	Count  uint64    `json:"count" jsonschema:"messages that carried it"`
	J2497  bool      `json:"j2497"`
	Min    *float64  `json:"min" jsonschema:"over number_count numeric values; null when there were none"`
	Max    *float64  `json:"max" jsonschema:"over number_count numeric values; null when there were none"`
	// NumberCount is the population of min and max.
	NumberCount uint64 `json:"number_count"`
	// Text is a text parameter's value (VIN, component or software id)
	// as printable ASCII, other bytes as '.'; null for other kinds. The
	// raw hex is the truth.
	Text *untrusted.Text `json:"text"`
}

func j1587ParamRowOf(port string, p j1587.ParamValue) j1587ParamRow {
	row := j1587ParamRow{Port: port, MID: p.MID, PID: p.PID, Name: p.Name, Kind: p.Kind, Value: p.Value, Unit: p.Unit, Status: p.Status,
		Raw: strings.ToUpper(p.Raw), Time: p.Time, Count: p.Count, J2497: p.J2497, Min: p.Min, Max: p.Max, NumberCount: p.NumberCount}
	if p.TextUntrusted {
		txt := untrusted.PrintableASCII([]byte(p.Text))
		row.Text = &txt
	}
	return row
}

var j1587Parameters = tool[j1587MIDIn, page[j1587ParamRow]]{
	name:  "j1587_parameters",
	reads: readsJ1708,
	desc: "Latest value per (MID, PID) from checksum-valid J1587 messages, by port, MID and PID: name, unit (US units), value (null unless status is ok), status (ok, not_available, short, no_number), " +
		"raw hex, time, how many messages carried it, and min/max over the numeric values seen. PID 192 sections are reassembled into their PID. " +
		"Text values (VIN, component and software id) are fenced sender text; the raw hex is the truth. Paged.",
	hints: readOnly(),
	ids:   []string{"port", "mid", "pid"},
	text:  []textSource{textJ1587},
	run: func(c *call, in j1587MIDIn) (page[j1587ParamRow], error) {
		srcs, err := j1708Sources(c, in.PortSelector)
		if err != nil {
			return page[j1587ParamRow]{}, err
		}
		var rows []j1587ParamRow
		index := map[string]uint64{}
		for _, s := range srcs {
			index[s.port] = s.index
			for _, p := range s.store.Parameters(in.mid()) {
				rows = append(rows, j1587ParamRowOf(s.port, p))
			}
		}
		return pageSlice(c, in.Paging, rows, func(r j1587ParamRow) rowKey { return rowKey{index[r.Port], uint64(r.MID)<<16 | uint64(r.PID)} })
	},
}

// j1587FaultRow is one diagnostic code seen in a MID's PID 194 tables.
type j1587FaultRow struct {
	Port    string `json:"port"`
	MID     int    `json:"mid"`
	MIDName string `json:"mid_name"`
	Code    int    `json:"code"`
	IsSID   bool   `json:"is_sid"` // true: subsystem id (SID); false: a PID
	// CodeName names the PID when the code is a PID this build defines.
	CodeName string `json:"code_name"`
	FMI      int    `json:"fmi"`
	// Active: the MID's latest table lists it as currently active.
	Active bool `json:"active"`
	// Listed: the MID's latest table lists it (active or previously active).
	Listed  bool      `json:"listed"`
	Count   *int      `json:"occurrence_count"` // null when the sender omitted it
	First   time.Time `json:"first_time"`
	Last    time.Time `json:"last_time"`
	Reports uint64    `json:"reports"`
	// TableTime is when the MID last sent a PID 194 table: active and
	// listed are as of then.
	TableTime time.Time `json:"table_time"`
}

func j1587FaultRowOf(port string, f j1587.FaultEntry, table time.Time) j1587FaultRow {
	return j1587FaultRow{Port: port, MID: f.MID, MIDName: f.MIDName, Code: f.Code, IsSID: f.IsSID, CodeName: f.CodeName, FMI: f.FMI,
		Active: f.Active, Listed: f.Listed, Count: f.Count, First: f.First, Last: f.Last, Reports: f.Reports, TableTime: table}
}

// faultKey orders fault rows by MID, then SIDs after PIDs, code and FMI:
// the fields that name an entry, so a row keeps its place between pages.
func (r j1587FaultRow) key(index uint64) rowKey {
	sid := uint64(0)
	if r.IsSID {
		sid = 1
	}
	return rowKey{index, uint64(r.MID)<<24 | sid<<20 | uint64(r.Code)<<8 | uint64(r.FMI)}
}

var j1587Faults = tool[j1587MIDIn, page[j1587FaultRow]]{
	name:  "j1587_faults",
	reads: readsJ1708,
	desc: "Diagnostic codes seen in PID 194 tables, by port, MID, PIDs before SIDs, code and FMI: SID or PID code (named when a PID), FMI, active (listed as active in the MID's latest table), listed, " +
		"occurrence count (null when the sender omitted it), first/last seen, reports, and when the MID last sent a table. A warning says when no MID sent a table, so 'no faults' is told apart from 'no data'. Paged.",
	hints: readOnly(),
	ids:   []string{"port", "mid", "is_sid", "code", "fmi"},
	run: func(c *call, in j1587MIDIn) (page[j1587FaultRow], error) {
		srcs, err := j1708Sources(c, in.PortSelector)
		if err != nil {
			return page[j1587FaultRow]{}, err
		}
		var rows []j1587FaultRow
		index := map[string]uint64{}
		tables := 0
		for _, s := range srcs {
			index[s.port] = s.index
			sent := s.store.FaultTables()
			for mid := range sent {
				if in.MID == nil || mid == int(*in.MID) {
					tables++
				}
			}
			for _, f := range s.store.Faults() {
				if in.MID == nil || f.MID == int(*in.MID) {
					rows = append(rows, j1587FaultRowOf(s.port, f, sent[f.MID]))
				}
			}
		}
		if tables == 0 {
			c.warnf("no MID has sent a PID 194 fault table yet: absence of faults is not known")
		}
		return pageSlice(c, in.Paging, rows, func(r j1587FaultRow) rowKey { return r.key(index[r.Port]) })
	},
}
