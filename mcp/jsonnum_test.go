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
		{name: "floats already short are the same slice", in: `{"pdd_ms":12.5,"e":"1e5","r":[0.25,-3.75,1e+21]}`, want: `{"pdd_ms":12.5,"e":"1e5","r":[0.25,-3.75,1e+21]}`},
		{name: "only the changed number moves", in: `{"a":"x","v":2.5,"w":0.1000000000000001,"t":true}`, want: `{"a":"x","v":2.5,"w":0.1,"t":true}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := []byte(tc.in)
			got := roundFloats(in)
			if string(got) != tc.want {
				t.Errorf("roundFloats(%s) = %s, want %s", tc.in, got, tc.want)
			}
			if !json.Valid(got) {
				t.Errorf("%s is not JSON", got)
			}
			if same := &got[0] == &in[0]; same != (tc.in == tc.want) {
				t.Errorf("roundFloats(%s) returned its input: %v, want %v (a copy only when a number changes)", tc.in, same, tc.in == tc.want)
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
		// What is rounded stays so, and a second pass copies nothing.
		if again := roundFloats(out); string(again) != string(out) || len(out) > 0 && &again[0] != &out[0] {
			t.Fatalf("%s → %s → %s: rounding twice moved something", s, out, again)
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
// fractional timings per row (docs/benchmarks.md): noisy ones that are
// rewritten, and short ones that leave the answer as it is.
func BenchmarkRoundFloats(b *testing.B) {
	for _, pdd := range []string{"12.300000000000001", "12.3"} {
		row := `{"call_id":"bench-17@10.2.0.1","id":17,"created":"2026-11-30T09:00:00.035Z","from_user":"1017","src":"10.2.0.1:5060","user_agents":["\"x\" 1.2"],"pdd_ms":` + pdd + `,"setup_ms":null,"messages":2},`
		body := []byte(`{"ok":true,"items":[` + strings.Repeat(row, 100) + `{}]}`)
		b.Run("pdd_ms="+pdd, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				roundFloats(body)
			}
		})
	}
}
