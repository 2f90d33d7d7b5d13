package dbc

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fieldtap/drivers/wire"
	"fieldtap/tools/refdata"
)

func TestEncode(t *testing.T) {
	db := loadTestdata(t, "handmade.dbc")
	tests := []struct {
		name    string
		message string
		values  map[string]float64
		opts    EncodeOptions
		data    string // want, hex
		id      uint32
		refused string // a substring of the refusal
	}{
		{
			name: "intel, signed nibble, motorola, labels, offsets", message: "Mixed",
			// The frame TestDecodeByteOrderSignScaling decodes, built back.
			values: map[string]float64{"IntelU": 292, "IntelS": -1, "Moto": 0xABC, "Gear": 3, "Temp": -40 + 0.1*float64(int16(-100))},
			data:   "34F2ABC000039CFF", id: 291,
		},
		{
			name: "J1939 fill is not-available", message: "J1939Msg", values: map[string]float64{"Speed": 100},
			data: "FF0064FFFFFFFFFF", id: 0x18FEF1FE | wire.CANEFF,
		},
		{
			name: "another source address by PGN", message: "J1939Msg", values: map[string]float64{"Speed": 1},
			opts: EncodeOptions{ID: 0x18FEF100 | wire.CANEFF}, data: "FF0001FFFFFFFFFF", id: 0x18FEF100 | wire.CANEFF,
		},
		{
			name: "base kept where no value is given", message: "Mixed", values: map[string]float64{"Gear": 1},
			opts: EncodeOptions{Base: []byte{0x34, 0xF2, 0xAB, 0xC0, 0x00, 0x03, 0x9C, 0xFF}}, data: "34F2ABC000019CFF", id: 291,
		},
		{
			name: "multiplexed signal with its switch", message: "Floaty", values: map[string]float64{"Mux": 2, "B": 0x1234 * 2, "F32": 1.5},
			data: "0000C03F02341200", id: 1024,
		},
		{name: "too big for its bits", message: "Mixed", values: map[string]float64{"Moto": 4096}, refused: "outside 0..4095 for 12 unsigned bits"},
		{name: "too negative for a signed nibble", message: "Mixed", values: map[string]float64{"IntelS": -9}, refused: "outside -8..7"},
		{name: "outside the declared range", message: "Mixed", values: map[string]float64{"Gear": 8}, refused: "outside the declared range [0, 7]"},
		{name: "not finite", message: "Mixed", values: map[string]float64{"Temp": math.Inf(1)}, refused: "not a finite number"},
		{name: "unknown signal", message: "Mixed", values: map[string]float64{"Nope": 1}, refused: "signal Nope: the message has no such signal"},
		{name: "multiplexer selects another", message: "Floaty", values: map[string]float64{"Mux": 1, "B": 2}, refused: "multiplexer Mux (raw 1) does not select it"},
		{name: "base of the wrong size", message: "Mixed", values: map[string]float64{}, opts: EncodeOptions{Base: []byte{1}}, refused: "base payload is 1 bytes"},
		{name: "id of another message", message: "J1939Msg", values: map[string]float64{}, opts: EncodeOptions{ID: 0x18FEF200 | wire.CANEFF}, refused: "does not carry this message"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := db.MessageByName(tc.message)
			got, err := m.Encode(tc.values, tc.opts)
			if tc.refused != "" {
				var ee *EncodeError
				if !errors.As(err, &ee) || !errors.Is(err, ErrEncode) || !strings.Contains(err.Error(), tc.refused) {
					t.Fatalf("err = %v, want a refusal containing %q", err, tc.refused)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.DataHex != tc.data || got.ID != tc.id || !got.SingleFrame || got.IDHex != wire.FormatCANID(tc.id) {
				t.Fatalf("encoded %s id %s, want %s id %s", got.DataHex, got.IDHex, tc.data, wire.FormatCANID(tc.id))
			}
			vals := m.Decode(got.Data, nil)
			for name, want := range tc.values {
				i := m.SignalIndex(name)
				if s := &m.Signals[i]; math.Abs(vals[i].Physical-want) > math.Abs(s.Factor)/2+1e-9 {
					t.Errorf("%s decodes to %v, encoded %v", name, vals[i].Physical, want)
				}
				if es := got.Signals[i]; es.Status != "set" || es.Value == nil || *es.Value != vals[i].Physical {
					t.Errorf("%s report %+v", name, es)
				}
			}
		})
	}
}

// TestEncodeReproducesCapturedFrames decodes every frame of a reference
// log that a DBC describes, encodes the decoded values again from the
// fill, and checks that every bit a signal covers comes back as captured:
// encode writes exactly the bits decode reads, on frames from the field.
func TestEncodeReproducesCapturedFrames(t *testing.T) {
	for _, tc := range []struct {
		dbc, log string
		frames   int // frames of the log the DBC describes
	}{
		// canarchy_complex.candump: 15 frames, each of a message of
		// canarchy_complex.dbc (PROVENANCE: 15 standard ids, 53 signals).
		{dbc: "canarchy_complex.dbc", log: "canarchy_complex.candump", frames: 15},
		// css_j1939_FCBF0606.log carries EEC1 (PGN 61444) ×577 and CCVS1
		// (65265) ×184 (GROUND_TRUTH.json pgn_top10), each a message of
		// the demo DBC by PGN.
		{dbc: "css_CSS-Electronics-SAE-J1939-DEMO.dbc", log: "css_j1939_FCBF0606.log", frames: 577 + 184},
	} {
		t.Run(tc.dbc, func(t *testing.T) {
			db, err := Parse(tc.dbc, readShared(t, tc.dbc))
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			var r wire.CandumpRecord
			var vals []Value
			for _, line := range bytes.Split(readShared(t, tc.log), []byte("\n")) {
				if wire.DecodeCandump(line, &r) != nil {
					continue
				}
				m, _ := db.Lookup(wire.CANID(r.ID), r.ID&wire.CANEFF != 0)
				if m == nil || int(r.Len) != m.Size {
					continue
				}
				n++
				vals = m.Decode(r.Payload(), vals)
				values := map[string]float64{}
				var mask [8]byte
				for i, v := range vals {
					if s := &m.Signals[i]; v.Status != StatusOK || (s.Min < s.Max && (v.Physical < s.Min || v.Physical > s.Max)) {
						continue // Encode refuses a value outside the declared range; captures hold some
					}
					values[m.Signals[i].Name] = v.Physical
					m.Signals[i].insert(mask[:m.Size], math.MaxUint64)
				}
				enc, err := m.Encode(values, EncodeOptions{ID: r.ID &^ wire.CANRTR})
				if err != nil {
					t.Fatalf("%s %X: %v", m.Name, r.Payload(), err)
				}
				for i := range m.Size {
					if enc.Data[i]&mask[i] != r.Data[i]&mask[i] {
						t.Fatalf("%s: captured %X, encoded %X (signal bits %X)", m.Name, r.Payload(), enc.Data, mask[:m.Size])
					}
				}
			}
			if n != tc.frames {
				t.Errorf("%d frames re-encoded, want %d", n, tc.frames)
			}
		})
	}
}

// maxFuzzDBC keeps FuzzEncodeRoundTrip fast: the large shared files
// (tesla, abs) multiply the work per input without new layouts.
const maxFuzzDBC = 8 << 10

// FuzzEncodeRoundTrip decodes arbitrary payloads with every message of
// the hand-made file and the shared ones, encodes the values back and
// checks they decode to themselves.
func FuzzEncodeRoundTrip(f *testing.F) {
	f.Add([]byte{0x34, 0xF2, 0xAB, 0xC0, 0x00, 0x03, 0x9C, 0xFF})
	f.Add([]byte{0, 0, 0xC0, 0x3F, 2, 0x34, 0x12, 0})
	var dbs []*Database
	files, _ := filepath.Glob(filepath.Join("testdata", "*.dbc"))
	shared, _ := filepath.Glob(filepath.Join(refdata.Path(f, "can"), "*.dbc")) // none without the data
	for _, p := range append(files, shared...) {
		// Small files only: every input encodes every message of each.
		if b, err := os.ReadFile(p); err == nil && len(b) < maxFuzzDBC {
			if db, err := Parse(p, b); err == nil {
				dbs = append(dbs, db)
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var vals []Value
		for _, db := range dbs {
			for i := range db.Messages {
				m := &db.Messages[i]
				payload := make([]byte, m.Size)
				copy(payload, data)
				vals = m.Decode(payload, vals)
				values := map[string]float64{}
				// Raws beyond 2^53 are left out in integers: float64(2^53+1)
				// rounds to 2^53, which a float comparison lets through.
				for j, v := range vals {
					s := &m.Signals[j]
					r, ok := v.Raw.Int64()
					if v.Status != StatusOK || math.IsNaN(v.Physical) || math.IsInf(v.Physical, 0) || s.Float != 0 || !ok || r > exactInt || r < -exactInt ||
						(s.Min < s.Max && (v.Physical < s.Min || v.Physical > s.Max)) {
						continue
					}
					values[s.Name] = v.Physical
				}
				enc, err := m.Encode(values, EncodeOptions{})
				if err != nil {
					continue // a value the declared range refuses, or a switch value left out
				}
				back := m.Decode(enc.Data, nil)
				for j, v := range vals {
					if _, ok := values[m.Signals[j].Name]; ok && back[j].Raw != v.Raw {
						t.Fatalf("%s.%s: raw %s encoded, %s decoded back (payload %X → %X)", m.Name, m.Signals[j].Name, v.Raw, back[j].Raw, payload, enc.Data)
					}
				}
			}
		}
	})
}

func TestInspect(t *testing.T) {
	db, err := Parse("demo.dbc", readShared(t, "css_CSS-Electronics-SAE-J1939-DEMO.dbc"))
	if err != nil {
		t.Fatal(err)
	}
	in, err := db.Inspect([]string{"EEC1"})
	if err != nil {
		t.Fatal(err)
	}
	if in.Messages != 1 || in.Signals != 1 || len(in.List) != 1 || !in.J1939 {
		t.Fatalf("inspection %+v", in)
	}
	m := in.List[0]
	s := m.Signals[0]
	if m.ID != "0CF004FE" || m.PGN == nil || *m.PGN != 61444 || s.Name != "EngineSpeed" || s.StartBit != 24 || s.Length != 16 ||
		s.ByteOrder != OrderIntel || s.Factor != 0.125 || s.SPN == nil || *s.SPN != 190 || s.FirstByte != 3 || s.LastByte != 4 || s.Unit != "rpm" {
		t.Errorf("EEC1 %+v, signal %+v", m, s)
	}
	if m.Comment != "Electronic Engine Controller 1" {
		t.Errorf("EEC1's comment %q", m.Comment)
	}
	if _, err := db.Inspect([]string{"NoSuch"}); !errors.Is(err, ErrNoMessage) {
		t.Errorf("unknown message: %v", err)
	}

	mux := loadTestdata(t, "handmade.dbc")
	in, _ = mux.Inspect([]string{"0x400", "Mixed"})
	var b2 SignalInfo
	for _, s := range in.List[0].Signals {
		if s.Name == "B" {
			b2 = s
		}
	}
	if in.Messages != 2 || b2.MultiplexedBy != "Mux" || len(b2.MuxValues) != 1 || b2.MuxValues[0] != [2]int64{2, 2} || in.List[0].Signals[0].ValueType != "float32" {
		t.Errorf("Floaty %+v", in.List[0])
	}
	gear := in.List[1].Signals[3]
	if gear.Name != "Gear" || len(gear.Labels) != 4 || gear.Labels[3] != (ValueLabel{Raw: 3, Label: "Drive"}) {
		t.Errorf("Gear %+v", gear)
	}
	if moto := in.List[1].Signals[2]; moto.ByteOrder != OrderMotorola || moto.FirstByte != 2 || moto.LastByte != 3 {
		t.Errorf("Moto %+v", moto)
	}
}

func TestInspectBounded(t *testing.T) {
	db, err := Parse("tesla.dbc", readShared(t, "opendbc_tesla_can.dbc"))
	if err != nil {
		t.Fatal(err)
	}
	in, _ := db.Inspect(nil)
	// PROVENANCE.md: 44 messages, 572 signals.
	if in.Messages != 44 || in.Signals != 572 || len(in.List) != min(44, MaxInspectMessages) {
		t.Errorf("inspection of %d messages %d signals lists %d", in.Messages, in.Signals, len(in.List))
	}
}

func TestEncodeRefusesInexactRaw(t *testing.T) {
	db, err := Parse("wide.dbc", []byte("BO_ 1 Wide: 8 N\n SG_ W : 0|64@1+ (1,0) [0|0] \"\" N\n"))
	if err != nil {
		t.Fatal(err)
	}
	m := db.MessageByName("Wide")
	if _, err := m.Encode(map[string]float64{"W": 1 << 60}, EncodeOptions{}); err == nil || !strings.Contains(err.Error(), "beyond 2^53") {
		t.Errorf("a raw a float64 cannot name exactly: err = %v", err)
	}
	if enc, err := m.Encode(map[string]float64{"W": 1 << 52}, EncodeOptions{}); err != nil || enc.DataHex != "0000000000001000" {
		t.Errorf("2^52: %v %s", err, enc.DataHex)
	}
}

func BenchmarkEncode(b *testing.B) {
	db := loadTestdata(b, "handmade.dbc")
	m := db.MessageByName("Mixed")
	values := map[string]float64{"IntelU": 292, "IntelS": -1, "Moto": 0xABC, "Gear": 3, "Temp": -50}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.Encode(values, EncodeOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}
