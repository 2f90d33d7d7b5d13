package dbc

import (
	"strings"
	"testing"
)

func TestFromWindows1252(t *testing.T) {
	tests := []struct {
		name string
		in   []byte
		want string
	}{
		{name: "ascii", in: []byte("abc"), want: "abc"},
		{name: "latin-1 degree", in: []byte{'"', 0xB0, '/', 's', '"'}, want: `"°/s"`},
		{name: "cp1252 euro and quotes", in: []byte{0x80, 0x93, 0x94}, want: "€“”"},
		{name: "undefined 0x81 stays C1", in: []byte{0x81}, want: "\u0081"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(fromWindows1252(tc.in)); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestStripLineComments(t *testing.T) {
	tests := []struct {
		name, in, want string
		n              int
	}{
		{name: "whole line", in: "// x\r\nVERSION \"\"\r\n", want: "\r\nVERSION \"\"\r\n", n: 1},
		{name: "trailing", in: "VERSION \"2.0\" // c\n", want: "VERSION \"2.0\" \n", n: 1},
		{name: "inside string kept", in: `CM_ "see http://x" ;`, want: `CM_ "see http://x" ;`},
		{name: "escaped quote", in: `CM_ "a \" // b" // c`, want: `CM_ "a \" // b" `, n: 1},
		{name: "none", in: "BO_ 1 A: 8 X", want: "BO_ 1 A: 8 X"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, n := stripLineComments([]byte(tc.in))
			if string(got) != tc.want || n != tc.n {
				t.Errorf("got %q (%d), want %q (%d)", got, n, tc.want, tc.n)
			}
		})
	}
}

func TestRewriteNestedMux(t *testing.T) {
	tests := []struct {
		name, in, want string
		ok             bool
	}{
		{name: "m0M", in: " SG_ S1 m0M : 4|4@1- (1,0)", want: " SG_ S1 m0  : 4|4@1- (1,0)", ok: true},
		{name: "m98M tight colon", in: " SG_ r m98M: 23|16@0+", want: " SG_ r m98 : 23|16@0+", ok: true},
		{name: "plain M", in: " SG_ S0 M : 0|4@1-", want: " SG_ S0 M : 0|4@1-"},
		{name: "plain m3", in: " SG_ S0 m3 : 0|4@1-", want: " SG_ S0 m3 : 0|4@1-"},
		{name: "no mux", in: " SG_ S0 : 0|4@1-", want: " SG_ S0 : 0|4@1-"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := []byte(tc.in)
			if ok := rewriteNestedMux(b); ok != tc.ok || string(b) != tc.want {
				t.Errorf("got %q %v, want %q %v", b, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestParseMulVal(t *testing.T) {
	tests := []struct {
		name, in, wantErr, wantWarning string
		ranges                         int
	}{
		{name: "ranges", in: "SG_MUL_VAL_ 2148676694 BIT_L Multiplexor 8-8, 16-16, 24-24;", ranges: 3},
		{name: "no semicolon", in: "SG_MUL_VAL_ 1 A B 1-1", ranges: 1, wantWarning: "line 7: SG_MUL_VAL_ statement does not end with ';'"},
		{name: "bad range", in: "SG_MUL_VAL_ 1 A B 3-1;", wantErr: "not lo-hi"},
		{name: "bad id", in: "SG_MUL_VAL_ x A B 1-1;", wantErr: "decimal"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var p prepared
			mv, err := parseMulVal("f.dbc", 7, tc.in, &p)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "f.dbc:7:") {
					t.Fatalf("err = %v, want f.dbc:7: …%s", err, tc.wantErr)
				}
				return
			}
			if err != nil || len(mv.ranges) != tc.ranges {
				t.Fatalf("mv = %+v, err %v", mv, err)
			}
			if got := strings.Join(p.warnings, "\n"); !strings.Contains(got, tc.wantWarning) || (tc.wantWarning == "") != (got == "") {
				t.Errorf("warnings %q, want %q", got, tc.wantWarning)
			}
		})
	}
}
