package j1939

import (
	"slices"
	"strings"
	"testing"

	"fieldtap/services/dbc"
)

func parseShared(t *testing.T, file string) *dbc.Database {
	t.Helper()
	var text []byte
	for _, l := range readLines(t, file) {
		text = append(append(text, l...), '\n')
	}
	db, err := dbc.Parse(strings.TrimSuffix(file, ".dbc"), text)
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func TestBuiltinCatalogueMatchesTable(t *testing.T) {
	c := BuiltinCatalogue()
	frame := []byte{0xF1, 0x7D, 0x82, 0x60, 0x2E, 0x00, 0xFF, 0x7D}
	for _, d := range SPNs() {
		p, ok := c.Lookup(d.SPN)
		if !ok || p.Source != SourceBuiltin || p.PGN != d.PGN {
			t.Fatalf("SPN %d: %+v", d.SPN, p)
		}
		if got, want := p.Decode(frame), d.Decode(frame); got != want {
			t.Errorf("SPN %d decodes %+v, the table's own decode %+v", d.SPN, got, want)
		}
	}
}

func TestCatalogueFromDBC(t *testing.T) {
	demo := parseShared(t, "css_CSS-Electronics-SAE-J1939-DEMO.dbc")
	oem := parseShared(t, "canarchy_j1939_oem_spn.dbc")
	c, notes := NewCatalogue(demo, oem)
	// The demo file's SPN 190 and 84 replace the built-in rows; its layout
	// is the same (docs/j1939.md), so values agree.
	if len(notes) != 2 || !strings.Contains(notes[0], "replaces the builtin") {
		t.Errorf("notes %q", notes)
	}
	p, _ := c.Lookup(190)
	b, _ := BuiltinCatalogue().Lookup(190)
	eec1 := []byte{0xF1, 0x7D, 0x82, 0x60, 0x2E, 0x00, 0xFF, 0x7D}
	if p.Source != "dbc:css_CSS-Electronics-SAE-J1939-DEMO" || p.StartBit != 24 || p.Bits != 16 || p.Decode(eec1).Value != b.Decode(eec1).Value {
		t.Errorf("SPN 190 %+v", p)
	}
	// The OEM SPN 9999 (OemBoostPressure, bit 8, 16 bits, 0.25, −50 kPa)
	// exists only in the operator's file.
	o, ok := c.Lookup(9999)
	if !ok || o.PGN != PGNEEC1 || o.DBCUnit != "kPa" || o.Unit != "" {
		t.Fatalf("SPN 9999 %+v", o)
	}
	v := o.Decode([]byte{0xFF, 0x90, 0x01, 0xFF})
	if v.Status != StatusOK || v.Value != 0x190*0.25-50 {
		t.Errorf("OEM boost %+v", v)
	}
	if _, ok := BuiltinCatalogue().Lookup(9999); ok {
		t.Error("building a catalogue changed the built-in one")
	}
}

func TestParamRanges(t *testing.T) {
	tests := []struct {
		name string
		p    Param
		data []byte
		want string
		raw  uint32
	}{
		{name: "byte ok", p: Param{StartBit: 0, Bits: 8, Scale: 1}, data: []byte{0xFA}, want: StatusOK, raw: 0xFA},
		{name: "byte reserved", p: Param{StartBit: 0, Bits: 8, Scale: 1}, data: []byte{0xFB}, want: StatusReserved},
		{name: "word error", p: Param{StartBit: 8, Bits: 16, Scale: 1}, data: []byte{0, 0x12, 0xFE}, want: StatusError},
		{name: "two-bit not available", p: Param{StartBit: 6, Bits: 2, Scale: 1}, data: []byte{0xC0}, want: StatusNotAvailable},
		{name: "two-bit error", p: Param{StartBit: 6, Bits: 2, Scale: 1}, data: []byte{0x80}, want: StatusError},
		{name: "two-bit on", p: Param{StartBit: 6, Bits: 2, Scale: 1}, data: []byte{0x40}, want: StatusOK, raw: 1},
		{name: "big endian nibble", p: Param{StartBit: 7, Bits: 4, BigEndian: true, Scale: 1}, data: []byte{0x5F}, want: StatusOK, raw: 5},
		{name: "big endian word across bytes", p: Param{StartBit: 3, Bits: 12, BigEndian: true, Scale: 1}, data: []byte{0x0A, 0xBC}, want: StatusOK, raw: 0xABC},
		{name: "too short", p: Param{StartBit: 8, Bits: 16, Scale: 1}, data: []byte{1, 2}, want: StatusMissing},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := tc.p.Decode(tc.data)
			if v.Status != tc.want || (tc.want == StatusOK && v.Raw != tc.raw) {
				t.Errorf("decode = %+v, want %s raw %#x", v, tc.want, tc.raw)
			}
		})
	}
}

// A catalogue set on the store decodes the samples it keeps from then on.
func TestStoreUsesCatalogue(t *testing.T) {
	s, _ := New(Limits{})
	c, _ := NewCatalogue(parseShared(t, "canarchy_j1939_oem_spn.dbc"))
	feed := func() {
		s.Feed("can0", d0, 0x0CF00431, true, []byte{0xFF, 0x90, 0x01, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF})
	}
	feed()
	s.SetCatalogue(c)
	feed()
	feed()
	n := 0
	s.Samples().Range(0, func(_ uint64, v Sample) bool {
		if v.SPN == 9999 {
			n++
		}
		return true
	})
	if n != 2 || s.Catalogue() != c {
		t.Errorf("%d samples of the DBC's SPN, want 2 (the two frames after SetCatalogue)", n)
	}
	vals := s.LatestPGN(PGNEEC1)
	if len(vals) != 1 || !slices.ContainsFunc(vals[0].Values, func(v SPNOut) bool { return v.SPN == 9999 && v.DBCUnit == "kPa" }) {
		t.Errorf("latest %+v", vals)
	}
	s.SetCatalogue(nil)
	if s.Catalogue() != BuiltinCatalogue() {
		t.Error("nil did not restore the built-in table")
	}
}
