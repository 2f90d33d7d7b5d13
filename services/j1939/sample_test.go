package j1939

import (
	"reflect"
	"testing"
	"time"
)

// TestSampleKeepsWhatWasDecoded: a sample read back gives the port, the
// arrival time and the value (unit and status spelt out) that decoding
// its message gives, on two ports, for a value that is available, one
// that is not and a message too short for some of its parameters.
func TestSampleKeepsWhatWasDecoded(t *testing.T) {
	s, err := New(Limits{})
	if err != nil {
		t.Fatal(err)
	}
	type fed struct {
		port string
		at   time.Time
		data []byte
	}
	feeds := []fed{
		{"can0", d0.Add(1234567 * time.Nanosecond), []byte{0xF1, 0x7D, 0x90, 0x20, 0x1C, 0x00, 0xF0, 0x7D}},
		{"can1", d0.Add(2 * time.Second), []byte{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFE, 0xFF, 0xFF}},
		{"can0", d0.Add(3 * time.Second), []byte{0xF1, 0x7D, 0x90}},
	}
	params := BuiltinCatalogue().Of(PGNEEC1)
	var want []Value
	for _, f := range feeds {
		if err := s.Feed(f.port, f.at, 0x0CF00400, true, f.data); err != nil {
			t.Fatal(err)
		}
		for _, p := range params {
			want = append(want, p.Decode(f.data))
		}
	}
	ports := s.Ports()
	i := 0
	statuses := map[string]bool{}
	s.Samples().Range(0, func(_ uint64, v Sample) bool {
		f := feeds[i/len(params)]
		if got := v.Decoded(); got != want[i] || v.Port(ports) != f.port || !v.Time().Equal(f.at) || v.SA != 0 {
			t.Errorf("sample %d: %+v on %q at %v, want %+v on %q at %v", i, got, v.Port(ports), v.Time(), want[i], f.port, f.at)
		}
		statuses[v.Decoded().Status] = true
		i++
		return true
	})
	if i != len(want) {
		t.Errorf("%d samples, want %d", i, len(want))
	}
	for _, st := range []string{StatusOK, StatusNotAvailable, StatusMissing} {
		if !statuses[st] {
			t.Errorf("no sample with status %s: the test did not try it", st)
		}
	}
}

// TestSampleHoldsNoPointer: the collector never scans the sample ring,
// and a sample costs the budget its 32 bytes and its ring slot's share.
func TestSampleHoldsNoPointer(t *testing.T) {
	typ := reflect.TypeFor[Sample]()
	for i := range typ.NumField() {
		switch f := typ.Field(i); f.Type.Kind() {
		case reflect.Int64, reflect.Float64, reflect.Uint32, reflect.Uint8:
		default:
			t.Errorf("Sample.%s is a %s", f.Name, f.Type)
		}
	}
	if got, size := SampleBytes(), typ.Size(); size != 32 || got > 40 {
		t.Errorf("a sample is %d bytes and costs %d, want 32 and at most 40", size, got)
	}
}

// TestEveryParameterUnitIsNumbered: a sample keeps its unit as a number,
// so every unit a catalogue's parameter carries must have one (a DBC's
// units are its DBCUnit, never Unit).
func TestEveryParameterUnitIsNumbered(t *testing.T) {
	cats := []*Catalogue{BuiltinCatalogue()}
	if c, err := NewCatalogue(parseShared(t, "canarchy_j1939_oem_spn.dbc")); err == nil {
		cats = append(cats, c)
	}
	for _, c := range cats {
		for _, p := range c.Params() {
			if unitNames[unitCode(p.Unit)] != p.Unit {
				t.Errorf("SPN %d: unit %q has no number", p.SPN, p.Unit)
			}
		}
	}
}

// TestFieldDecodesAsParam checks the cache's word-load decode against
// Param.decodeSample, bit by bit: every built-in parameter and Intel and
// Motorola signals of every start and width, on payloads short and long.
func TestFieldDecodesAsParam(t *testing.T) {
	params := BuiltinCatalogue().Params()
	for start := range 70 {
		for _, bits := range []int{1, 2, 3, 7, 8, 9, 12, 16, 24, 31, 32, 33, 57, 58, 63, 64} {
			params = append(params, Param{SPN: 1, StartBit: start, Bits: bits, Scale: 0.5, Offset: -3},
				Param{SPN: 2, StartBit: start, Bits: bits, BigEndian: true, Scale: 2, Offset: 1})
		}
	}
	rnd := uint64(7)
	data := make([]byte, 24)
	words := 0
	for i := range params {
		p := &params[i]
		f := newField(p, 0)
		if f.word {
			words++
		}
		for n := range len(data) + 1 {
			for range 4 {
				for k := range data {
					rnd = rnd*6364136223846793005 + 1442695040888963407
					data[k] = byte(rnd >> 56)
					if rnd>>40&3 == 0 {
						data[k] = 0xFF // not-available and error codes
					}
				}
				var want, got Sample
				p.decodeSample(data[:n], &want)
				want.unit = unitCode(p.Unit)
				got.Raw, got.Value, got.status = 99, 99, 99 // decode must write every field
				f.decode(data[:n], &got)
				if got != want {
					t.Fatalf("%+v on % X: field %+v, param %+v", *p, data[:n], got, want)
				}
			}
		}
	}
	if words < len(params)/3 {
		t.Errorf("only %d of %d parameters take the word load", words, len(params))
	}
}

// BenchmarkDecode is one sample of each built-in parameter from an
// 8-byte payload, through Param.decodeSample and through its field.
func BenchmarkDecode(b *testing.B) {
	params := BuiltinCatalogue().Params()
	fields := make([]field, len(params))
	for i := range params {
		fields[i] = newField(&params[i], 0)
	}
	data := []byte{1, 2, 3, 4, 5, 6, 7, 8}
	var v Sample
	b.Run("param", func(b *testing.B) {
		for b.Loop() {
			for i := range params {
				params[i].decodeSample(data, &v)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(params)), "ns/sample")
	})
	b.Run("field", func(b *testing.B) {
		for b.Loop() {
			for i := range fields {
				fields[i].decode(data, &v)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(params)), "ns/sample")
	})
}
