package mcp

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"fieldtap/drivers/wire"
	"fieldtap/services/canbus"
)

// canTools is the can bundle: raw frames, the ID table, bus load, candump
// export, and DBC decoding (bundle_dbc.go).
var canTools = []toolDef{canBuses, canFrames, canIDs, busLoad, exportCANLog, dbcLoad, dbcDecode}

// canPorts resolves the port argument against the CAN store's ports.
func canPorts(d Deps, sel PortSelector) ([]*canbus.Port, error) {
	return choosePorts(sel, "CAN", d.CAN.Ports(), (*canbus.Port).Name)
}

// canRings is each chosen port's frame ring with its index among all
// CAN ports, for pagePortRings.
func canRings(d Deps, chosen []*canbus.Port) []portRing[canbus.Record] {
	all := d.CAN.Ports()
	out := make([]portRing[canbus.Record], 0, len(chosen))
	for _, p := range chosen {
		out = append(out, portRing[canbus.Record]{index: uint64(slices.Index(all, p)), name: p.Name(), snap: p.Frames()})
	}
	return out
}

type canBusesIn struct {
	PortSelector
}

type canBusesOut struct {
	Buses []canBusRow `json:"buses"`
}

var canBuses = tool[canBusesIn, canBusesOut]{
	name:  "can_buses",
	reads: readsCAN,
	desc:  "Every CAN port (or one): bitrate used for load, frames (standard, extended, remote, error), distinct ids, mean and 1-second peak bus load, first/last frame time, its frame store, and the driver's link view (mode, bus state, bus-offs, restarts).",
	hints: readOnly(),
	run: func(c *call, in canBusesIn) (canBusesOut, error) {
		ps, err := canPorts(c.d, in.PortSelector)
		if err != nil {
			return canBusesOut{}, err
		}
		out := canBusesOut{Buses: make([]canBusRow, 0, len(ps))}
		for _, p := range ps {
			out.Buses = append(out.Buses, canBusRowOf(p.Status()))
		}
		return out, nil
	},
}

// canSelect is what can_frames and export_canlog filter frames by.
type canSelect struct {
	ID   canIDArg   `json:"id,omitempty"`
	Mask hexMaskArg `json:"mask,omitempty"`
	window
}

// canMatch is a parsed canSelect.
type canMatch struct {
	id, mask uint32
	haveID   bool
	in       span
}

func (s canSelect) match() (canMatch, error) {
	var m canMatch
	var err error
	if m.in, err = s.span(); err != nil {
		return m, err
	}
	switch {
	case s.ID != "":
		m.id, m.haveID = hexValue(string(s.ID)), true
		if len(s.ID) > 3 {
			m.id |= wire.CANEFF
		} else if m.id > wire.CANSFFMask {
			return m, argErr("id", "use 4 or more digits for a 29-bit id", "%s is more than 11 bits", s.ID)
		}
		m.mask = wire.CANEFFMask | wire.CANEFF
		if s.Mask != "" {
			m.mask = hexValue(string(s.Mask)) | wire.CANEFF
		}
	case s.Mask != "":
		return m, argErr("mask", "give id with mask", "a mask needs an id")
	}
	return m, nil
}

func (m canMatch) frame(r canbus.Record) bool {
	if m.haveID && (r.ID&^wire.CANRTR)&m.mask != m.id&m.mask {
		return false
	}
	return m.in.holds(r.Time)
}

type canFramesIn struct {
	PortSelector
	canSelect
	Paging
	Projection
}

type canFrameRow struct {
	Port     string    `json:"port"`
	Seq      uint64    `json:"seq"`
	Time     time.Time `json:"time"`
	ID       string    `json:"id"`
	Extended bool      `json:"extended"`
	Remote   bool      `json:"remote"`
	Error    bool      `json:"error"`
	// FD is a CAN FD frame; BRS and ESI its flags (false on classic).
	FD  bool `json:"fd"`
	BRS bool `json:"brs"`
	ESI bool `json:"esi"`
	// DLC is the code sent on the bus and Length the data bytes: equal
	// on classic CAN, 9 to 15 for 12 to 64 bytes on CAN FD.
	DLC    int    `json:"dlc"`
	Length int    `json:"length"`
	Data   string `json:"data"`
}

func canFrameRowOf(port string, seq uint64, r canbus.Record) canFrameRow {
	row := canFrameRow{Port: port, Seq: seq, Time: r.Time, ID: wire.FormatCANID(r.ID), Extended: r.ID&wire.CANEFF != 0,
		Remote: r.ID&wire.CANRTR != 0, Error: r.ID&wire.CANERR != 0, DLC: int(r.Len), Length: int(r.Len), Data: fmt.Sprintf("%X", r.Payload())}
	if r.IsFD() {
		row.FD, row.BRS, row.ESI = true, r.Flags&wire.CANFDBRS != 0, r.Flags&wire.CANFDESI != 0
		row.DLC = wire.CANFDDLC(int(r.Len))
	}
	return row
}

var canFrames = tool[canFramesIn, page[canFrameRow]]{
	name:  "can_frames",
	reads: readsCAN,
	desc:  "Stored CAN frames, port by port (each oldest first), filtered by id/mask and time window; paged. Empty port means every CAN port.",
	hints: readOnly(),
	ids:   []string{"port", "seq"},
	run: func(c *call, in canFramesIn) (page[canFrameRow], error) {
		ps, err := canPorts(c.d, in.PortSelector)
		if err != nil {
			return page[canFrameRow]{}, err
		}
		m, err := in.match()
		if err != nil {
			return page[canFrameRow]{}, err
		}
		return pagePortRings(c, in.Paging, canRings(c.d, ps), "frames",
			func(_ string, r canbus.Record) bool { return m.frame(r) },
			canFrameRowOf)
	},
}

type canIDsIn struct {
	PortSelector
	Paging
	Projection
}

type canIDRow struct {
	Port     string    `json:"port"`
	ID       string    `json:"id"`
	Extended bool      `json:"extended"`
	Count    uint64    `json:"count"`
	First    time.Time `json:"first"`
	Last     time.Time `json:"last"`
	LastData string    `json:"last_data"`
	// Lengths are the data lengths seen, in the order first seen, and
	// DLCs their codes: the same on classic CAN, 9 to 15 for CAN FD's
	// 12 to 64 bytes. Ints, not bytes: []uint8 would encode as base64.
	Lengths     []int    `json:"lengths"`
	DLCs        []int    `json:"dlcs"`
	ChangedBits string   `json:"changed_bits"` // hex mask over the first 8 data bytes: a 1 bit has changed at least once
	ChangedByte []int    `json:"changed_bytes"`
	Rate        *float64 `json:"rate_hz"` // null with fewer than two frames or no time span
	// FDFrames of the id's frames are CAN FD; BRSFrames and ESIFrames of
	// those had the flag set.
	FDFrames  uint64 `json:"fd_frames"`
	BRSFrames uint64 `json:"brs_frames"`
	ESIFrames uint64 `json:"esi_frames"`
}

func canIDRowOf(port string, s canbus.IDStats) canIDRow {
	dlcs := make([]int, 0, len(s.DLCs))
	for _, n := range s.DLCs {
		if d := wire.CANFDDLC(n); !slices.Contains(dlcs, d) {
			dlcs = append(dlcs, d)
		}
	}
	return canIDRow{Port: port, ID: s.IDHex, Extended: s.Extended, Count: s.Count, First: s.First, Last: s.Last, LastData: s.LastData,
		Lengths: s.DLCs, DLCs: dlcs, ChangedBits: s.ChangedBits, ChangedByte: s.ChangedByte, Rate: s.Rate(),
		FDFrames: s.FD, BRSFrames: s.BRS, ESIFrames: s.ESI}
}

var canIDs = tool[canIDsIn, page[canIDRow]]{
	name:  "can_ids",
	reads: readsCAN,
	desc:  "The ID table per port: per CAN id count, rate, first/last time, last data, lengths/DLCs, FD counts, changed bytes/bits; standard ids first, in id order. Paged.",
	hints: readOnly(),
	ids:   []string{"port", "id"},
	run: func(c *call, in canIDsIn) (page[canIDRow], error) {
		ps, err := canPorts(c.d, in.PortSelector)
		if err != nil {
			return page[canIDRow]{}, err
		}
		pg, err := newPager(c, in.Paging)
		if err != nil {
			return page[canIDRow]{}, err
		}
		all := c.d.CAN.Ports()
		rows := []canIDRow{}
		for _, p := range ps {
			idx := uint64(slices.Index(all, p))
			for _, s := range p.IDs() {
				if pg.offer(rowKey{idx, uint64(s.ID)}) {
					rows = append(rows, canIDRowOf(p.Name(), s))
				}
			}
			if st := p.Status(); st.IDOverflow > 0 {
				c.warnf("port %s: %d frames carried ids beyond the table's %d-id bound and are not listed", p.Name(), st.IDOverflow, canbus.MaxIDs)
			}
		}
		return page[canIDRow]{Items: rows, Page: pg.page()}, nil
	},
}

type busLoadIn struct {
	PortSelector
	window
	Paging
	Projection
}

type busLoadRow struct {
	Port    string    `json:"port"`
	Start   time.Time `json:"start"`
	Frames  uint64    `json:"frames"`
	Bits    uint64    `json:"bits"`
	Bitrate int       `json:"bitrate"`
	Load    float64   `json:"load"`
}

var busLoad = tool[busLoadIn, page[busLoadRow]]{
	name:  "bus_load",
	reads: readsCAN,
	desc: fmt.Sprintf("Bus load per second, port by port, oldest first, over a time window (the last %d s are kept): frames, bits on the wire and load = bits / bitrate. "+
		"Bits per frame use the worst-case stuffing estimate g+8n+13+floor((g+8n-1)/4), g = 34 for an 11-bit and 54 for a 29-bit id (Davis et al. 2007). Paged.", canbus.MaxSeconds),
	hints: readOnly(),
	ids:   []string{"port", "start"},
	run: func(c *call, in busLoadIn) (page[busLoadRow], error) {
		ps, err := canPorts(c.d, in.PortSelector)
		if err != nil {
			return page[busLoadRow]{}, err
		}
		sp, err := in.span()
		if err != nil {
			return page[busLoadRow]{}, err
		}
		pg, err := newPager(c, in.Paging)
		if err != nil {
			return page[busLoadRow]{}, err
		}
		all := c.d.CAN.Ports()
		rows := []busLoadRow{}
		for _, p := range ps {
			idx := uint64(slices.Index(all, p))
			bitrate := p.Status().Bitrate
			for _, s := range p.Seconds() {
				if sp.holds(s.Start) && pg.offer(rowKey{idx, uint64(s.Start.Unix())}) {
					rows = append(rows, busLoadRow{Port: p.Name(), Start: s.Start, Frames: s.Frames, Bits: s.Bits, Bitrate: bitrate, Load: s.Load})
				}
			}
		}
		return page[busLoadRow]{Items: rows, Page: pg.page()}, nil
	},
}

type exportLinesArg int

func (exportLinesArg) argSchema() *jsonschema.Schema {
	return sipCount("lines per port, oldest first", 1, canbus.MaxExportLines, canbus.DefaultExportLines)
}

// canLogFormatArg is export_canlog's file format.
type canLogFormatArg string

func (canLogFormatArg) argSchema() *jsonschema.Schema {
	values := make([]string, len(canbus.Formats))
	for i, f := range canbus.Formats {
		values[i] = string(f)
	}
	return enumArg("default candump", values)
}

type exportCANLogIn struct {
	PortSelector
	canSelect
	MaxLines exportLinesArg  `json:"max_lines,omitempty"`
	Format   canLogFormatArg `json:"format,omitempty"`
}

type exportCANLogOut struct {
	Exports []canCandumpRow `json:"exports" jsonschema:"one per port: the log (candump, asc or blf_base64), lines, from_recorder (older than the store, from disk), truncated (max_lines reached), recorder_cut (the recorder's read bound ended the older part)"`
}

var exportCANLog = tool[exportCANLogIn, exportCANLogOut]{
	name:  "export_canlog",
	reads: readsCAN,
	desc:  "CAN frames as a candump -l, ASC or BLF log per port, oldest first, by id/mask and time: the recorder's older frames, then the store. At most max_lines a port.",
	hints: readOnly(),
	run: func(c *call, in exportCANLogIn) (exportCANLogOut, error) {
		ps, err := canPorts(c.d, in.PortSelector)
		if err != nil {
			return exportCANLogOut{}, err
		}
		m, err := in.match()
		if err != nil {
			return exportCANLogOut{}, err
		}
		// A nil *recorder.Recorder in the interface would be called.
		var rec canbus.Recorded
		if c.d.BlackBox.Recorder != nil {
			rec = c.d.BlackBox.Recorder
		}
		sel := canbus.Selection{ID: m.id, Mask: m.mask, HasID: m.haveID, Since: m.in.since, Until: m.in.until, MaxLines: count(int(in.MaxLines), canbus.DefaultExportLines), Format: canbus.Format(in.Format)}
		out := exportCANLogOut{Exports: []canCandumpRow{}}
		for _, p := range ps {
			x, err := c.d.CAN.ExportCandump(c.ctx, rec, p.Name(), sel)
			if errors.Is(err, canbus.ErrNothingToExport) {
				c.warnf("port %s: no stored or recorded frame matches", p.Name())
				continue
			}
			if err != nil {
				return exportCANLogOut{}, fmt.Errorf("export %s: %w", p.Name(), err)
			}
			if x.Truncated {
				c.warnf("port %s: max_lines (%d) reached; narrow since/until for the rest", p.Name(), sel.MaxLines)
			}
			if x.RecorderCut {
				c.warnf("port %s: the recorder's read bound ended the older frames early; narrow since/until", p.Name())
			}
			out.Exports = append(out.Exports, canCandumpRowOf(x))
		}
		if len(out.Exports) == 0 {
			return exportCANLogOut{}, notFound("widen since/until or the id; can_frames shows what the store holds, find_in_captures what the recorder holds", "no stored or recorded CAN frame matches")
		}
		return out, nil
	},
}
