package mcp

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"
)

func TestRoundFloats(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{name: "noise after the 15th digit", in: `{"v":14.100000000000001,"w":0.30000000000000004}`, want: `{"v":14.1,"w":0.3}`},
		{name: "integers untouched", in: `{"seq":18446744073709551615,"n":-42,"z":0}`, want: `{"seq":18446744073709551615,"n":-42,"z":0}`},
		{name: "strings untouched", in: `{"s":"1.00000000000000001","e":"a\"1.5e3"}`, want: `{"s":"1.00000000000000001","e":"a\"1.5e3"}`},
		{name: "escaped backslash ends the string", in: `{"s":"a\\","v":0.30000000000000004,"t":"\\\"2.5\\"}`, want: `{"s":"a\\","v":0.3,"t":"\\\"2.5\\"}`},
		{name: "exponent", in: `[1.2345678901234567e-7,3e300]`, want: `[1.23456789012e-07,3e+300]`},
		{name: "twelve digits kept", in: `[1234567.890123456,0.5]`, want: `[1234567.89012,0.5]`},
		{name: "no floats is the same slice", in: `{"a":[1,2,3],"b":true,"c":null}`, want: `{"a":[1,2,3],"b":true,"c":null}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := roundFloats([]byte(tc.in))
			if string(got) != tc.want {
				t.Errorf("roundFloats(%s) = %s, want %s", tc.in, got, tc.want)
			}
			if !json.Valid(got) {
				t.Errorf("%s is not JSON", got)
			}
		})
	}
}

func FuzzRoundFloats(f *testing.F) {
	for _, s := range []string{`{"v":14.100000000000001}`, `["1.5",2.5e-9,"\"3.25"]`, `{"a":-0.0,"b":1E+2}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !json.Valid([]byte(s)) {
			return
		}
		out := roundFloats([]byte(s))
		if !json.Valid(out) {
			t.Fatalf("%s → %s is not JSON", s, out)
		}
		var a, b any
		_ = json.Unmarshal([]byte(s), &a)
		_ = json.Unmarshal(out, &b)
		// Strings, keys, structure and integers survive; only fractions move.
		if shape(a) != shape(b) {
			t.Fatalf("%s → %s changed shape", s, out)
		}
	})
}

// shape renders a decoded value with every number replaced by #.
func shape(v any) string {
	switch x := v.(type) {
	case map[string]any:
		out := "{"
		for _, k := range slices.Sorted(maps.Keys(x)) {
			out += k + ":" + shape(x[k]) + ","
		}
		return out + "}"
	case []any:
		out := "["
		for _, e := range x {
			out += shape(e) + ","
		}
		return out + "]"
	case float64:
		return "#"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// BenchmarkRoundFloats: a 100-row list answer, mostly strings, a few
// fractional timings per row (docs/benchmarks.md).
func BenchmarkRoundFloats(b *testing.B) {
	row := `{"call_id":"bench-17@10.2.0.1","id":17,"created":"2026-11-30T09:00:00.035Z","from_user":"1017","src":"10.2.0.1:5060","user_agents":["\"x\" 1.2"],"pdd_ms":12.300000000000001,"setup_ms":null,"messages":2},`
	body := []byte(`{"ok":true,"items":[` + strings.Repeat(row, 100) + `{}]}`)
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		roundFloats(body)
	}
}
