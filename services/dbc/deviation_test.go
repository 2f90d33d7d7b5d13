package dbc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
)

// TestMissingSemicolonOnARealFile drops the ';' of a CM_, a VAL_ (its
// last one, at the end of the file's VAL_ block) and a BA_DEF_ line of
// opendbc's Prius file: it still loads, one warning names each line, and
// it decodes, labels and comments exactly as the intact file.
func TestMissingSemicolonOnARealFile(t *testing.T) {
	good := readShared(t, "opendbc_toyota_prius_2010_pt.dbc")
	lines := bytes.SplitAfter(good, []byte("\n"))
	var dropped []int
	for i, ln := range lines {
		s := string(bytes.TrimRight(ln, "\r\n"))
		if (strings.HasPrefix(s, "CM_ SG_ 466 CRUISE_STATE") || strings.HasPrefix(s, "VAL_ 466 CRUISE_STATE") ||
			strings.HasPrefix(s, "VAL_ 610 LKA_STATE") || strings.HasPrefix(s, "BA_DEF_ ")) && strings.HasSuffix(s, ";") {
			lines[i] = append([]byte(strings.TrimSuffix(strings.TrimRight(s, " ;"), ";")), '\n')
			dropped = append(dropped, i+1)
		}
	}
	if len(dropped) < 3 {
		t.Fatalf("the file changed: only lines %v lost their ';'", dropped)
	}
	ref, err := Parse("prius.dbc", good)
	if err != nil {
		t.Fatal(err)
	}
	db, err := Parse("prius.dbc", bytes.Join(lines, nil))
	if err != nil {
		t.Fatalf("refused: %v", err)
	}
	if len(db.Warnings) != len(dropped) {
		t.Fatalf("warnings %q, want one for each of lines %v", db.Warnings, dropped)
	}
	for i, line := range dropped {
		if !strings.HasPrefix(db.Warnings[i], fmt.Sprintf("line %d: ", line)) || !strings.Contains(db.Warnings[i], "does not end with ';'") {
			t.Errorf("warning %q, want line %d", db.Warnings[i], line)
		}
	}
	if len(ref.Warnings) != 0 {
		t.Errorf("the intact file warns: %q", ref.Warnings)
	}
	if !reflect.DeepEqual(ref.Messages, db.Messages) {
		t.Error("the repaired file's messages differ from the intact file's")
	}
	m := db.MessageByName("PCM_CRUISE")
	s := &m.Signals[m.SignalIndex("CRUISE_STATE")]
	if v := m.Decode([]byte{0, 0, 0, 0, 0, 0, 0x80, 0}, nil)[m.SignalIndex("CRUISE_STATE")]; s.Labels[8] != "active" || !strings.HasPrefix(s.Comment, "Active state is 8") {
		t.Errorf("CRUISE_STATE %+v label %q comment %q", v, s.Labels[8], s.Comment)
	}
}

// TestDeviationsCantoolsReads covers what cantools reads and einride's
// grammar alone does not, or does only by accident: each case loads
// with the messages and warnings given.
func TestDeviationsCantoolsReads(t *testing.T) {
	const msg = "BO_ 100 M: 8 A\n SG_ S : 0|8@1+ (1,0) [0|255] \"\" B\n"
	tests := []struct {
		name, text string
		warnings   []string
		comment    string
		labels     int
	}{
		{name: "no BU_ line", text: "VERSION \"\"\nNS_ :\nBS_:\n" + msg},
		{name: "extra whitespace", text: "BU_:   A   B\n\nBO_   100   M :  8  A\n\t SG_  S  :  0|8@1+  ( 1 , 0 )  [ 0 | 255 ]  \"\"  B\n"},
		{name: "CM_ over lines", text: msg + "CM_ SG_ 100 S \"first line\nsecond; BO_ 7 X: 8 A\nthird\";\n", comment: "first line second; BO_ 7 X: 8 A third"},
		{name: "CM_ over lines without ';'", text: msg + "CM_ SG_ 100 S \"one\ntwo\"\nVAL_ 100 S 1 \"on\" 0 \"off\";\n",
			comment: "one two", labels: 2, warnings: []string{"line 4: CM_ statement does not end with ';'"}},
		{name: "VAL_ without ';' at the end of the file", text: msg + "VAL_ 100 S 1 \"on\" 0 \"off\" \n\n",
			labels: 2, warnings: []string{"line 3: VAL_ statement does not end with ';'"}},
		{name: "BA_DEF_ without ';' before BA_", text: "BA_DEF_ BO_ \"GenMsgCycleTime\" INT 0 65535\r\n" + msg + "BA_ \"GenMsgCycleTime\" BO_ 100 10\r\n",
			warnings: []string{"line 1: BA_DEF_ statement", "line 4: BA_ statement"}},
		{name: "NS_ keywords alone on their lines", text: "NS_ :\n\tCM_\n\tBA_DEF_\n\tVAL_\n\nBS_:\n" + msg},
		{name: "';' inside a string", text: msg + "CM_ BO_ 100 \"a; b\"\nCM_ SG_ 100 S \"c\";\n", comment: "c",
			warnings: []string{"line 3: CM_ statement"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			db, err := Parse("dev.dbc", []byte(tc.text))
			if err != nil {
				t.Fatal(err)
			}
			if len(db.Messages) != 1 || len(db.Messages[0].Signals) != 1 {
				t.Fatalf("messages %+v", db.Messages)
			}
			if len(db.Warnings) != len(tc.warnings) {
				t.Fatalf("warnings %q, want %q", db.Warnings, tc.warnings)
			}
			for i, w := range tc.warnings {
				if !strings.HasPrefix(db.Warnings[i], w) {
					t.Errorf("warning %q, want %q…", db.Warnings[i], w)
				}
			}
			s := db.Messages[0].Signals[0]
			if s.Comment != tc.comment || len(s.Labels) != tc.labels {
				t.Errorf("comment %q labels %v, want %q and %d", s.Comment, s.Labels, tc.comment, tc.labels)
			}
		})
	}
}

// TestWarningsAreBounded: a file of many unterminated statements keeps
// MaxWarnings of them and counts the rest.
func TestWarningsAreBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString("BO_ 100 M: 8 A\n SG_ S : 0|8@1+ (1,0) [0|255] \"\" B\n")
	for i := range MaxWarnings + 5 {
		fmt.Fprintf(&b, "CM_ SG_ 100 S \"c%d\"\n", i)
	}
	db, err := Parse("many.dbc", []byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if len(db.Warnings) != MaxWarnings+1 || db.Warnings[MaxWarnings] != "5 more warnings not listed" {
		t.Errorf("%d warnings, last %q", len(db.Warnings), db.Warnings[len(db.Warnings)-1])
	}
}

// TestUnsigned64 decodes a 64-bit unsigned signal: its raw value is the
// uint64 as read, never negative, in JSON too, and its physical value is
// computed from it.
func TestUnsigned64(t *testing.T) {
	db, err := Parse("u64.dbc", []byte("BO_ 1 M: 8 A\n SG_ U : 0|64@1+ (0.5,1) [0|0] \"\" B\nBO_ 2 N: 8 A\n SG_ S : 0|64@1- (1,0) [0|0] \"\" B\n"))
	if err != nil {
		t.Fatal(err)
	}
	ff := bytes.Repeat([]byte{0xFF}, 8)
	u := db.Messages[0].Decode(ff, nil)[0]
	if got, _ := json.Marshal(u.Raw); string(got) != "18446744073709551615" || u.Raw.String() != "18446744073709551615" {
		t.Errorf("raw %s", got)
	}
	if _, ok := u.Raw.Int64(); ok {
		t.Error("an unsigned raw over MaxInt64 converted to int64")
	}
	if want := float64(math.MaxUint64)*0.5 + 1; u.Physical != want {
		t.Errorf("physical %v, want %v", u.Physical, want)
	}
	s := db.Messages[1].Decode(ff, nil)[0]
	if got, _ := json.Marshal(s.Raw); string(got) != "-1" || s.Physical != -1 {
		t.Errorf("signed: raw %s physical %v", got, s.Physical)
	}
	rows := SignalValues(&db.Messages[0], []Value{u})
	if got, _ := json.Marshal(rows[0].Raw); string(got) != "18446744073709551615" {
		t.Errorf("row raw %s", got)
	}
}

// TestAbsenceIsBounded: past MaxCountedIDs distinct ids the count says
// "at least", and each side names at most absenceListed ids.
func TestAbsenceIsBounded(t *testing.T) {
	db, err := Parse("a.dbc", []byte("BO_ 1 M: 8 A\n SG_ S : 0|8@1+ (1,0) [0|255] \"\" B\n"))
	if err != nil {
		t.Fatal(err)
	}
	frames := func(yield func(Frame) bool) {
		for id := range uint32(MaxCountedIDs + 10) {
			if !yield(Frame{ID: (id + 0x1000) | 0x80000000}) {
				return
			}
		}
	}
	got := db.Absence(nil, frames)
	if !strings.Contains(got, fmt.Sprintf("the window's %d frames carry at least %d distinct id(s)", MaxCountedIDs+10, MaxCountedIDs)) ||
		strings.Count(got, "×1") != absenceListed || !strings.Contains(got, "the message has 1 id(s) (001)") {
		t.Errorf("%s", got)
	}
	if got := db.Absence(nil, func(func(Frame) bool) {}); got != "" {
		t.Errorf("an empty window: %q", got)
	}
}
