package j1939

import (
	"fmt"
	"maps"
	"slices"

	"fieldtap/services/dbc"
)

// Where a parameter definition comes from.
const (
	SourceBuiltin = "builtin"
	sourceDBC     = "dbc:" // + the database's registry name
)

// MaxParamBits is the widest parameter a catalogue takes: Value.Raw holds
// 32 bits, and J1939-71 parameters are at most 4 bytes.
const MaxParamBits = 32

// Param is one SPN a catalogue decodes: where it sits in its PGN (bit
// level, so a DBC's sub-byte signals fit) and how it scales.
type Param struct {
	SPN  uint32
	PGN  uint32
	Name string
	// StartBit is the least significant bit for little-endian (Intel,
	// every J1939-71 parameter) and as the DBC writes it for big-endian.
	StartBit  int
	Bits      int
	BigEndian bool
	Scale     float64
	Offset    float64
	// Unit is the built-in table's; DBCUnit the operator file's text,
	// which an answer fences.
	Unit    string
	DBCUnit string
	// Source is "builtin" or "dbc:<database name>". A DBC parameter
	// names its File and Message; Replaces is the Source of the
	// definition of the same SPN it overrides ("" when it adds one).
	Source, File, Message, Replaces string
}

// Catalogue is the set of SPNs every J1939 view decodes: the built-in
// table (docs/j1939.md gives each row's source) extended, and where they
// overlap overridden, by the SPN attributes of an operator's J1939 DBC
// files. It is immutable once built.
type Catalogue struct {
	params []Param            // by SPN
	bySPN  map[uint32]int     // index into params
	byPGN  map[uint32][]Param // PGN → its params, in start-bit order
	dbs    []string           // database names it was built from
	notes  []string
}

// builtinCatalogue is the built-in table as a Catalogue: built once from
// the constant spnTable, never written.
var builtinCatalogue = func() *Catalogue {
	c, _ := NewCatalogue()
	return c
}()

// BuiltinCatalogue returns the catalogue of the built-in table alone.
func BuiltinCatalogue() *Catalogue { return builtinCatalogue }

// NewCatalogue builds the built-in table plus every signal of dbs that
// carries an SPN attribute in an extended message. A later database wins
// over an earlier one and over the built-in table; the notes say where
// that happened and what was left out (a signal wider than MaxParamBits).
func NewCatalogue(dbs ...*dbc.Database) (*Catalogue, []string) {
	c := &Catalogue{bySPN: map[uint32]int{}, byPGN: map[uint32][]Param{}}
	add := func(p Param) {
		if i, ok := c.bySPN[p.SPN]; ok {
			old := c.params[i]
			c.notes = append(c.notes, fmt.Sprintf("SPN %d: %s replaces the %s definition", p.SPN, p.Source, old.Source))
			p.Replaces = old.Source
			c.params[i] = p
			return
		}
		c.bySPN[p.SPN] = len(c.params)
		c.params = append(c.params, p)
	}
	for _, d := range spnTable {
		add(Param{SPN: d.SPN, PGN: d.PGN, Name: d.Name, StartBit: 8 * (d.Byte - 1), Bits: 8 * d.Bytes, Scale: d.Scale, Offset: d.Offset,
			Unit: d.Unit, Source: SourceBuiltin})
	}
	for _, db := range dbs {
		c.dbs = append(c.dbs, db.Name)
		for mi := range db.Messages {
			m := &db.Messages[mi]
			if !m.Extended {
				continue
			}
			for si := range m.Signals {
				s := &m.Signals[si]
				switch {
				case s.SPN == 0:
					continue
				case s.Size > MaxParamBits || s.Float != 0:
					c.notes = append(c.notes, fmt.Sprintf("SPN %d (%s.%s in %s): %d-bit signal left out: at most %d integer bits", s.SPN, m.Name, s.Name, db.Name, s.Size, MaxParamBits))
					continue
				case s.Mux >= 0:
					c.notes = append(c.notes, fmt.Sprintf("SPN %d (%s.%s in %s): multiplexed signal left out: decode it with the DBC", s.SPN, m.Name, s.Name, db.Name))
					continue
				}
				add(Param{SPN: s.SPN, PGN: pgnOfID(m.ID), Name: s.Name, StartBit: s.Start, Bits: s.Size, BigEndian: s.BigEndian,
					Scale: s.Factor, Offset: s.Offset, DBCUnit: s.Unit, Source: sourceDBC + db.Name, File: db.File, Message: m.Name})
			}
		}
	}
	slices.SortFunc(c.params, func(a, b Param) int { return int(a.SPN) - int(b.SPN) })
	for i, p := range c.params {
		c.bySPN[p.SPN] = i
		c.byPGN[p.PGN] = append(c.byPGN[p.PGN], p)
	}
	for _, ps := range c.byPGN {
		slices.SortFunc(ps, func(a, b Param) int { return a.StartBit - b.StartBit })
	}
	return c, slices.Clone(c.notes)
}

// pgnOfID is the PGN of a 29-bit id (PDU1: the PS byte is an address).
func pgnOfID(id uint32) uint32 { return ParseID(id).PGN }

// Lookup returns spn's definition.
func (c *Catalogue) Lookup(spn uint32) (Param, bool) {
	i, ok := c.bySPN[spn]
	if !ok {
		return Param{}, false
	}
	return c.params[i], true
}

// Of returns the parameters pgn carries, in start-bit order; do not
// modify.
func (c *Catalogue) Of(pgn uint32) []Param { return c.byPGN[pgn] }

// PGNs lists the PGNs that carry a parameter of the catalogue, in
// ascending order.
func (c *Catalogue) PGNs() []uint32 { return slices.Sorted(maps.Keys(c.byPGN)) }

// Has reports whether pgn carries any parameter of the catalogue.
func (c *Catalogue) Has(pgn uint32) bool { return len(c.byPGN[pgn]) > 0 }

// Params returns every definition, by SPN (a copy).
func (c *Catalogue) Params() []Param { return slices.Clone(c.params) }

// Databases names the DBC files the catalogue was built from.
func (c *Catalogue) Databases() []string { return slices.Clone(c.dbs) }

// Notes say what building the catalogue overrode or left out.
func (c *Catalogue) Notes() []string { return slices.Clone(c.notes) }

// Decode extracts p from a PGN payload with the J1939-71 value ranges:
// for a parameter of whole bytes the top byte says not available (0xFF),
// error (0xFE) or reserved (0xFB–0xFD); for a narrower one all ones is
// not available and all ones less one is error (two-bit states: 3 and 2).
func (p *Param) Decode(data []byte) Value {
	var v Sample
	p.decodeSample(data, &v)
	return Value{SPN: v.SPN, Raw: v.Raw, Value: v.Value, Unit: p.Unit, Status: statusNames[v.status]}
}

// decodeSample is Decode into a sample's ring slot, each field written
// in place (a value built on the stack and copied out stalls on the
// copy: its narrow stores do not forward to the wide loads that move
// it); the unit is left to the caller.
func (p *Param) decodeSample(data []byte, v *Sample) {
	v.SPN = p.SPN
	raw, ok := p.extract(data)
	if !ok {
		v.Raw, v.Value, v.status = 0, 0, statusMissing
		return
	}
	v.Raw = uint32(raw)
	v.status = rangeCode(raw, p.Bits)
	v.Value = 0
	if v.status == statusOK {
		v.Value = float64(raw)*p.Scale + p.Offset
	}
}

// extract reads the raw bits, or reports that data is too short.
func (p *Param) extract(data []byte) (uint64, bool) {
	var raw uint64
	if p.BigEndian {
		// DBC Motorola numbering: the start bit is the MSB; counted MSB
		// first, the signal runs from lin for Bits bits.
		lin := p.StartBit/8*8 + 7 - p.StartBit%8
		if (lin+p.Bits-1)/8 >= len(data) {
			return 0, false
		}
		for i := lin; i < lin+p.Bits; i++ {
			raw = raw<<1 | uint64(data[i>>3]>>(7-i&7)&1)
		}
		return raw, true
	}
	first, last := p.StartBit/8, (p.StartBit+p.Bits-1)/8
	if last >= len(data) {
		return 0, false
	}
	for i := last; i >= first; i-- {
		raw = raw<<8 | uint64(data[i])
	}
	return raw >> (p.StartBit % 8) & (1<<p.Bits - 1), true
}

// rangeCode applies the J1939-71 §5.1.4 ranges to a raw value of bits,
// as an index in statusNames.
func rangeCode(raw uint64, bits int) uint8 {
	if bits%8 == 0 {
		switch top := raw >> (bits - 8); {
		case top == 0xFF:
			return statusNotAvailable
		case top == 0xFE:
			return statusError
		case top >= 0xFB:
			return statusReserved
		}
		return statusOK
	}
	ones := uint64(1)<<bits - 1
	switch {
	case bits < 2:
		return statusOK
	case raw == ones:
		return statusNotAvailable
	case raw == ones-1:
		return statusError
	}
	return statusOK
}
