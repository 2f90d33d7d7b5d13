package filter

import (
	"errors"
	"regexp"
	"testing"
)

var schema = Schema{
	{Name: "method", Kind: String, Multi: true},
	{Name: "final_code", Kind: Number},
	{Name: "from_user", Kind: String},
	{Name: "pdd_ms", Kind: Number},
	{Name: "has_ack", Kind: Bool},
}

type rec []Value

func (r rec) Field(i int) Value { return r[i] }

var call = rec{
	{Strs: []string{"INVITE", "ACK"}},
	{Num: 486},
	{Str: "1001"},
	{Null: true},
	{Bool: true},
}

func TestMatch(t *testing.T) {
	tests := []struct {
		src  string
		want bool
	}{
		{"", true},
		{`method == INVITE and final_code >= 400 and from_user ~ "^10"`, true},
		{"method == BYE", false},
		{"method != BYE", true},
		{"method != ACK", false},
		{"final_code < 400 or from_user == 1001", true},
		{"not (final_code == 486)", false},
		{"pdd_ms > 0", false},
		{"pdd_ms == null", true},
		{"from_user != null", true},
		{"has_ack", true},
		{"has_ack == false", false},
		{"from_user !~ '^2'", true},
		{"METHOD == INVITE AND final_code == 486", false}, // field names are case-sensitive
	}
	for _, tc := range tests {
		t.Run(tc.src, func(t *testing.T) {
			e, err := Compile(tc.src, schema)
			if err != nil {
				if tc.src == "METHOD == INVITE AND final_code == 486" {
					return
				}
				t.Fatal(err)
			}
			if got := e.Match(call); got != tc.want {
				t.Errorf("Match = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestErrorsPointAtTheColumn(t *testing.T) {
	tests := []struct {
		src string
		col int
	}{
		{"fromuser == 1", 1},
		{"method == INVITE and final_code >= abc", 36},
		{"final_code = 4", 12},
		{`from_user ~ "(`, 13},
		{`from_user ~ "[a-"`, 13},
		{"(method == INVITE", 18},
		{"method == INVITE final_code", 18},
		{"has_ack > true", 9},
		{"final_code ~ 4", 12},
		{"method ==", 10},
		{"from_user == 'open", 14},
		{"final_code >= 1 #", 17},
	}
	for _, tc := range tests {
		t.Run(tc.src, func(t *testing.T) {
			_, err := Compile(tc.src, schema)
			var fe *Error
			if !errors.As(err, &fe) {
				t.Fatalf("err = %v, want *Error", err)
			}
			if fe.Col != tc.col {
				t.Errorf("column %d (%v), want %d\n%s", fe.Col, err, tc.col, fe.Pointer())
			}
		})
	}
}

func TestBounds(t *testing.T) {
	deep := ""
	for range MaxDepth + 2 {
		deep += "not "
	}
	if _, err := Compile(deep+"has_ack", schema); err == nil {
		t.Error("nesting beyond MaxDepth accepted")
	}
	long := make([]byte, MaxSource+1)
	for i := range long {
		long[i] = ' '
	}
	if _, err := Compile(string(long), schema); err == nil {
		t.Error("source beyond MaxSource accepted")
	}
}

func FuzzCompile(f *testing.F) {
	f.Add(`method == INVITE and final_code >= 400 and from_user ~ "^10"`)
	f.Add("not (has_ack or pdd_ms > 3)")
	f.Fuzz(func(t *testing.T, src string) {
		e, err := Compile(src, schema)
		if err == nil {
			e.Match(call)
		}
	})
}

// TestLiteralPatternsMatchLikeRegexp keeps the no-regexp shortcut honest:
// every pattern answers exactly as the regexp engine would.
func TestLiteralPatternsMatchLikeRegexp(t *testing.T) {
	inputs := []string{"", "14", "1401", "2014", "x14y", "^14", "a.b", "axb"}
	for _, pat := range []string{"^14", "14", "^", "a.b", `a\.b`, "^a.b", "x", "^x14y"} {
		re := regexp.MustCompile(pat)
		lit := literalOf(pat)
		n := cmpNode{re: re, lit: lit}
		for _, in := range inputs {
			if got, want := n.match(in), re.MatchString(in); got != want {
				t.Errorf("pattern %q on %q: shortcut says %v, regexp %v (literal %+v)", pat, in, got, want, lit)
			}
		}
	}
}

func TestReadsOnly(t *testing.T) {
	numbers := func(i int) bool { return schema[i].Kind == Number }
	tests := []struct {
		src  string
		want bool
	}{
		{"", true},
		{"final_code >= 400", true},
		{"final_code >= 400 and pdd_ms == null", true},
		{"final_code >= 400 and from_user ~ '^14'", false},
		{"not (final_code == 486 or pdd_ms > 3)", true},
		{"pdd_ms > 3 or has_ack", false},
		{"not has_ack", false},
	}
	for _, tc := range tests {
		e, err := Compile(tc.src, schema)
		if err != nil {
			t.Fatal(err)
		}
		if got := e.ReadsOnly(numbers); got != tc.want {
			t.Errorf("%q: ReadsOnly(numbers) = %v, want %v", tc.src, got, tc.want)
		}
	}
}

// scalars is rec answering as Scalars too.
type scalars struct{ rec }

func (s scalars) Num(i int) (float64, bool) { return s.rec[i].Num, s.rec[i].Null }
func (s scalars) Str(i int) (string, bool)  { return s.rec[i].Str, s.rec[i].Null }

func TestMatchScalarsAgreesWithMatch(t *testing.T) {
	recs := []rec{call, {{Strs: nil}, {Null: true}, {Str: ""}, {Num: 12.5}, {Bool: false}}, {{Strs: []string{"BYE"}}, {Num: 200}, {Str: "2001"}, {Num: 0}, {}},
		{{}, {Num: 486, Null: true}, {Str: "1001", Null: true}, {}, {}}} // null wins over what a null value holds
	for _, src := range []string{
		"final_code >= 400", "final_code == null", "final_code != null", "from_user == null", "from_user != null",
		`from_user ~ "^10"`, `from_user !~ "^10"`, "from_user < 2", "pdd_ms <= 12.5 and not has_ack", "method == BYE or from_user == 1001",
	} {
		e, err := Compile(src, schema)
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range recs {
			if got, want := e.MatchScalars(r, scalars{r}), e.Match(r); got != want {
				t.Errorf("%s on record %d: MatchScalars %v, Match %v", src, i, got, want)
			}
		}
	}
}
