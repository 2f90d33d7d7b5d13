package dbc

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fieldtap/tools/refdata"
)

// readShared reads a file of the shared CAN reference data, skipping the
// test when it is absent.
func readShared(t testing.TB, file string) []byte {
	t.Helper()
	b, err := os.ReadFile(refdata.File(t, "can", file))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func muxed(db *Database) int {
	n := 0
	for _, m := range db.Messages {
		for _, s := range m.Signals {
			if s.Mux >= 0 {
				n++
			}
		}
	}
	return n
}

// TestSharedDBCFiles loads every DBC in ../shared/testdata/can against
// PROVENANCE.md: the counts einride reported where it parsed, and for the
// files it refused, that the wrapper now reads them (Latin-1, `//`,
// `mNM`) or refuses them with the line and reason (prose).
func TestSharedDBCFiles(t *testing.T) {
	tests := []struct {
		file                    string
		msgs, signals, ext, mux int
		j1939                   bool
		note                    string // a substring of one note
		wantErr                 string // a substring of the refusal
		wantLine                int
	}{
		{file: "css_CSS-Electronics-SAE-J1939-DEMO.dbc", msgs: 2, signals: 2, ext: 2, j1939: true},
		{file: "css_tp_j1939.dbc", msgs: 1, signals: 1, ext: 1},
		{file: "css_tp_uds.dbc", msgs: 2, signals: 7, mux: 4, note: "nested multiplexer"},
		{file: "css_tp_uds_nissan.dbc", msgs: 1, signals: 6, mux: 5, note: "nested multiplexer"},
		{file: "opendbc_toyota_prius_2010_pt.dbc", msgs: 26, signals: 78},
		{file: "opendbc_tesla_can.dbc", msgs: 44, signals: 572, mux: 36},
		{file: "cantools_j1939.dbc", msgs: 2, signals: 2, ext: 2, j1939: true},
		{file: "cantools_multiplex.dbc", msgs: 1, signals: 12, ext: 1, mux: 11, j1939: true},
		{file: "cantools_multiplex_2.dbc", msgs: 4, signals: 19, ext: 4, mux: 14, j1939: true, note: "2 nested multiplexer"},
		{file: "cantools_abs.dbc", msgs: 18, signals: 89, mux: 38, note: "Windows-1252"},
		{file: "cantools_foobar.dbc", msgs: 5, signals: 8, ext: 4, note: "2 `//` comment"},
		{file: "canarchy_j1939_sample.dbc", msgs: 3, signals: 8, ext: 3},
		{file: "canarchy_j1939_oem_spn.dbc", msgs: 1, signals: 1, ext: 1},
		{file: "canarchy_sample.dbc", msgs: 2, signals: 6, ext: 2},
		{file: "canarchy_complex.dbc", msgs: 15, signals: 53},
		{file: "canarchy_invalid.dbc", wantErr: "defines no message", wantLine: 1},
	}
	sharedCAN := refdata.Path(t, "can") // each file skips on its own when absent
	files, _ := filepath.Glob(filepath.Join(sharedCAN, "*.dbc"))
	if len(files) > 0 && len(files) != len(tests) {
		t.Errorf("%d DBC files in %s, %d in this table: add the new ones", len(files), sharedCAN, len(tests))
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			db, err := Parse(tc.file, readShared(t, tc.file))
			if tc.wantErr != "" {
				var e *Error
				if !errors.As(err, &e) || !strings.Contains(e.Reason, tc.wantErr) || e.Line != tc.wantLine || e.File != tc.file {
					t.Fatalf("err = %v, want %s:%d: …%s", err, tc.file, tc.wantLine, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			ext := 0
			for _, m := range db.Messages {
				if m.Extended {
					ext++
				}
			}
			if len(db.Messages) != tc.msgs || db.Signals != tc.signals || ext != tc.ext || muxed(db) != tc.mux || db.J1939 != tc.j1939 {
				t.Errorf("msgs %d signals %d ext %d muxed %d j1939 %v, want %d %d %d %d %v",
					len(db.Messages), db.Signals, ext, muxed(db), db.J1939, tc.msgs, tc.signals, tc.ext, tc.mux, tc.j1939)
			}
			if tc.note != "" && !strings.Contains(strings.Join(db.Notes, "\n"), tc.note) {
				t.Errorf("notes %q, want one with %q", db.Notes, tc.note)
			}
		})
	}
}

func TestLatin1UnitIsTranscoded(t *testing.T) {
	db, err := Parse("cantools_abs.dbc", readShared(t, "cantools_abs.dbc"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range db.Messages {
		if i := m.SignalIndex("Yaw_Rate"); i >= 0 {
			if u := m.Signals[i].Unit; u != "°/s" {
				t.Errorf("unit = %q, want °/s", u)
			}
			return
		}
	}
	t.Error("no Yaw_Rate signal")
}

func TestParseRefusals(t *testing.T) {
	const head = "VERSION \"\"\nNS_ :\nBS_:\nBU_: N\n"
	tests := []struct {
		name, text, want string
		line             int
	}{
		{name: "empty", text: "", want: "defines no message", line: 1},
		{name: "header only", text: head, want: "defines no message", line: 1},
		{name: "signal past the end", text: head + "BO_ 1 A: 1 N\n SG_ S : 4|8@1+ (1,0) [0|0] \"\" N\n", want: "ends outside the 1-byte message", line: 6},
		{name: "motorola past the end", text: head + "BO_ 1 A: 1 N\n SG_ S : 3|8@0+ (1,0) [0|0] \"\" N\n", want: "Motorola", line: 6},
		{name: "duplicate id", text: head + "BO_ 1 A: 8 N\nBO_ 1 B: 8 N\n", want: "already defined at line 5", line: 6},
		{name: "mux without switch", text: head + "BO_ 1 A: 8 N\n SG_ S m1 : 0|8@1+ (1,0) [0|0] \"\" N\n", want: "0 top-level multiplexers", line: 6},
		{name: "mul val unknown signal", text: head + "BO_ 1 A: 8 N\n SG_ M0 M : 0|8@1+ (1,0) [0|0] \"\" N\nSG_MUL_VAL_ 1 Nope M0 1-1;\n", want: "does not have", line: 7},
		{name: "mul val non-switch", text: head + "BO_ 1 A: 8 N\n SG_ M0 M : 0|8@1+ (1,0) [0|0] \"\" N\n SG_ X m1 : 8|8@1+ (1,0) [0|0] \"\" N\n SG_ Y m1 : 16|8@1+ (1,0) [0|0] \"\" N\nSG_MUL_VAL_ 1 Y X 1-1;\n", want: "not a multiplexer", line: 9},
		{name: "circular mux", text: head + "BO_ 1 A: 8 N\n SG_ P m1M : 0|8@1+ (1,0) [0|0] \"\" N\n SG_ Q m1M : 8|8@1+ (1,0) [0|0] \"\" N\nSG_MUL_VAL_ 1 P Q 1-1;\nSG_MUL_VAL_ 1 Q P 1-1;\n", want: "circular", line: 6},
		{name: "swallowed message", text: head + "FOO_ a b\nBO_ 1 A: 8 N\n", want: "skipped by the parser", line: 6},
		{name: "too wide", text: head + "BO_ 1 A: 16 N\n SG_ S : 0|65@1+ (1,0) [0|0] \"\" N\n", want: "65 bits", line: 6},
		{name: "einride parse error", text: head + "BO_ x A: 8 N\n", line: 5},
		{name: "float size", text: head + "BO_ 1 A: 8 N\n SG_ S : 0|16@1+ (1,0) [0|0] \"\" N\nSIG_VALTYPE_ 1 S : 1;\n", want: "32-bit float", line: 7},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("t.dbc", []byte(tc.text))
			var e *Error
			if !errors.As(err, &e) || !strings.Contains(e.Reason, tc.want) || e.Line != tc.line {
				t.Fatalf("err = %v, want t.dbc:%d: …%s", err, tc.line, tc.want)
			}
		})
	}
}

func TestParseRefusesOversize(t *testing.T) {
	_, err := Parse("big.dbc", make([]byte, MaxFileBytes+1))
	if err == nil || !strings.Contains(err.Error(), "over the") {
		t.Fatalf("err = %v", err)
	}
}
