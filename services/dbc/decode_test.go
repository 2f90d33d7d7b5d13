package dbc

import (
	"math"
	"os"
	"path/filepath"
	"testing"
)

func loadTestdata(t testing.TB, file string) *Database {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	db, err := Parse(file, b)
	if err != nil {
		t.Fatal(err)
	}
	return db
}

type want struct {
	signal string
	phys   float64
	raw    int64
	status Status
	label  string
}

func checkDecode(t *testing.T, m *Message, data []byte, wants []want) {
	t.Helper()
	vals := m.Decode(data, nil)
	for _, w := range wants {
		i := m.SignalIndex(w.signal)
		if i < 0 {
			t.Fatalf("no signal %s", w.signal)
		}
		v := vals[i]
		if r, _ := v.Raw.Int64(); v.Status != w.status || (w.status == StatusOK && (math.Abs(v.Physical-w.phys) > 1e-9 || r != w.raw)) {
			t.Errorf("%s = %+v, want phys %v raw %d %v", w.signal, v, w.phys, w.raw, w.status)
		}
		if l, _ := m.Signals[i].Label(v); l != w.label {
			t.Errorf("%s label = %q, want %q", w.signal, l, w.label)
		}
	}
}

func TestDecodeByteOrderSignScaling(t *testing.T) {
	db := loadTestdata(t, "handmade.dbc")
	mixed := db.MessageByName("Mixed")
	floaty := db.MessageByName("Floaty")
	tests := []struct {
		name  string
		m     *Message
		data  []byte
		wants []want
	}{
		{name: "full frame", m: mixed, data: []byte{0x34, 0xF2, 0xAB, 0xC0, 0x00, 0x03, 0x9C, 0xFF}, wants: []want{
			{signal: "IntelU", phys: 292, raw: 0x234},
			{signal: "IntelS", phys: -1, raw: -1},
			{signal: "Moto", phys: 2748, raw: 0xABC},
			{signal: "Gear", phys: 3, raw: 3, label: "Drive"},
			{signal: "Temp", phys: -50, raw: -100},
		}},
		{name: "short frame", m: mixed, data: []byte{0x34, 0xF2, 0xAB}, wants: []want{
			{signal: "IntelU", phys: 292, raw: 0x234},
			{signal: "Moto", status: StatusShort},
			{signal: "Gear", status: StatusShort},
		}},
		{name: "float and mux 2", m: floaty, data: []byte{0x00, 0x00, 0xC0, 0x3F, 0x02, 0x10, 0x00, 0x00}, wants: []want{
			{signal: "F32", phys: 1.5, raw: 0x3FC00000},
			{signal: "Mux", phys: 2, raw: 2},
			{signal: "A", status: StatusMuxInactive},
			{signal: "B", phys: 32, raw: 16},
		}},
		{name: "mux 1", m: floaty, data: []byte{0, 0, 0, 0, 0x01, 0x07, 0, 0}, wants: []want{
			{signal: "A", phys: 7, raw: 7},
			{signal: "B", status: StatusMuxInactive},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { checkDecode(t, tc.m, tc.data, tc.wants) })
	}
	if c := mixed.Comment; c != "Mixed byte orders // not a comment" {
		t.Errorf("comment = %q: a // inside a string must stay", c)
	}
}

func TestNestedMuxAndLatin1(t *testing.T) {
	db := loadTestdata(t, "nested_latin1.dbc")
	m := db.MessageByName("Nested")
	tests := []struct {
		name  string
		data  []byte
		wants []want
	}{
		{name: "top 1 sub 2 selects leaf", data: []byte{0x21, 0x55}, wants: []want{
			{signal: "Sub", phys: 2, raw: 2}, {signal: "Leaf", phys: 0x55, raw: 0x55}, {signal: "Other", status: StatusMuxInactive}}},
		{name: "top 1 sub 3 selects nothing", data: []byte{0x31, 0x55}, wants: []want{
			{signal: "Leaf", status: StatusMuxInactive}, {signal: "Other", status: StatusMuxInactive}}},
		{name: "top 4 (range 3-4) selects other, not sub", data: []byte{0x24, 0x55}, wants: []want{
			{signal: "Sub", status: StatusMuxInactive}, {signal: "Leaf", status: StatusMuxInactive}, {signal: "Other", phys: 0x55, raw: 0x55}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { checkDecode(t, m, tc.data, tc.wants) })
	}
	leaf := m.Signals[m.SignalIndex("Leaf")]
	if leaf.Unit != "°C" || leaf.Comment != "Température" {
		t.Errorf("unit %q comment %q: Latin-1 not transcoded", leaf.Unit, leaf.Comment)
	}
}

func TestLookupJ1939ByPGN(t *testing.T) {
	db := loadTestdata(t, "handmade.dbc")
	tests := []struct {
		name  string
		id    uint32
		ext   bool
		want  string
		match Match
	}{
		{name: "exact", id: 0x18FEF1FE, ext: true, want: "J1939Msg", match: MatchExact},
		{name: "other SA and priority", id: 0x0CFEF100, ext: true, want: "J1939Msg", match: MatchPGN},
		{name: "standard id", id: 291, want: "Mixed", match: MatchExact},
		{name: "standard id as extended", id: 291, ext: true, match: MatchNone},
		{name: "unknown", id: 0x7FF, match: MatchNone},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, match := db.Lookup(tc.id, tc.ext)
			if match != tc.match || (m == nil) != (tc.want == "") || (m != nil && m.Name != tc.want) {
				t.Fatalf("Lookup = %v %v, want %s %v", m, match, tc.want, tc.match)
			}
			if m != nil && m.Matches(tc.id, tc.ext) != tc.match {
				t.Errorf("Matches disagrees with Lookup")
			}
		})
	}
}

// TestSharedJ1939EngineSpeed decodes EEC1 from the CSS demo DBC: SPN 190
// at byte 3-4 ×0.125 rpm, matched by PGN from SA 0.
func TestSharedJ1939EngineSpeed(t *testing.T) {
	db, err := Parse("css.dbc", readShared(t, "css_CSS-Electronics-SAE-J1939-DEMO.dbc"))
	if err != nil {
		t.Fatal(err)
	}
	m, match := db.Lookup(0x0CF00400, true)
	if m == nil || m.Name != "EEC1" || match != MatchPGN {
		t.Fatalf("lookup = %v %v", m, match)
	}
	checkDecode(t, m, []byte{0xF8, 0x7D, 0x7D, 0x40, 0x1F, 0x00, 0xFF, 0x7D}, []want{{signal: "EngineSpeed", phys: 1000, raw: 0x1F40}})
}

// TestSharedNissanTPPayload decodes a reassembled 55-byte UDS answer
// (service 0x61, response 0x01) with nested multiplexing and a Motorola
// signal past byte 8.
func TestSharedNissanTPPayload(t *testing.T) {
	db, err := Parse("nissan.dbc", readShared(t, "css_tp_uds_nissan.dbc"))
	if err != nil {
		t.Fatal(err)
	}
	m := db.MessageByName("SoC_Temp")
	data := make([]byte, 55)
	data[1], data[2] = 0x61, 0x01
	data[34], data[35], data[36] = 0x0C, 0x35, 0x00 // 0x0C3500 = 800000 → 80 %
	checkDecode(t, m, data, []want{
		{signal: "service", phys: 0x61, raw: 0x61},
		{signal: "response", phys: 1, raw: 1},
		{signal: "SoC", phys: 80, raw: 0x0C3500},
		{signal: "BatPackTemp1", status: StatusMuxInactive},
	})
	data[2] = 0x04
	data[5] = 21
	checkDecode(t, m, data, []want{{signal: "SoC", status: StatusMuxInactive}, {signal: "BatPackTemp1", phys: 21, raw: 21}})
	data[1] = 0x62 // another service: response itself is not selected
	checkDecode(t, m, data, []want{{signal: "response", status: StatusMuxInactive}, {signal: "BatPackTemp1", status: StatusMuxInactive}})
}

func TestDecodeReusesDst(t *testing.T) {
	m := loadTestdata(t, "handmade.dbc").MessageByName("Mixed")
	dst := make([]Value, 0, 16)
	data := []byte{1, 2, 3, 4, 5, 6, 7, 8}
	if n := testing.AllocsPerRun(100, func() { dst = m.Decode(data, dst) }); n != 0 {
		t.Errorf("Decode allocates %v times per call", n)
	}
}

func BenchmarkDecode(b *testing.B) {
	db := loadTestdata(b, "handmade.dbc")
	m := db.MessageByName("Mixed")
	data := []byte{0x34, 0xF2, 0xAB, 0xC0, 0x00, 0x03, 0x9C, 0xFF}
	dst := make([]Value, 0, len(m.Signals))
	b.ReportAllocs()
	for b.Loop() {
		mm, _ := db.Lookup(291, false)
		dst = mm.Decode(data, dst)
	}
	_ = m
}

// BenchmarkDecodeTesla decodes every message of a 572-signal database
// once per iteration (one frame each), lookups included.
func BenchmarkDecodeTesla(b *testing.B) {
	db, err := Parse("tesla.dbc", readShared(b, "opendbc_tesla_can.dbc"))
	if err != nil {
		b.Fatal(err)
	}
	data := []byte{0x12, 0x34, 0x56, 0x78, 0x9A, 0xBC, 0xDE, 0xF0}
	var dst []Value
	b.ReportAllocs()
	for b.Loop() {
		for i := range db.Messages {
			m, _ := db.Lookup(db.Messages[i].ID, db.Messages[i].Extended)
			dst = m.Decode(data, dst)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(db.Messages)), "ns/frame")
}
