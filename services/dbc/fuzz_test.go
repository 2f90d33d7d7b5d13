package dbc

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"fieldtap/tools/refdata"
)

// FuzzDBC parses anything and decodes with whatever loads: no input may
// panic, and a loaded database must decode any frame length.
func FuzzDBC(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("testdata", "*.dbc"))
	shared, _ := filepath.Glob(filepath.Join(refdata.Path(f, "can"), "*.dbc")) // none without the data
	for _, p := range append(seeds, shared...) {
		if b, err := os.ReadFile(p); err == nil && len(b) < 64<<10 {
			f.Add(b, []byte{1, 2, 3, 4, 5, 6, 7, 8})
		}
	}
	f.Add([]byte("BO_ 1 A: 8 N\n SG_ S m0M : 0|8@1+ (1,0) [0|0] \"\" N\n"), []byte{0})
	f.Add([]byte("SG_MUL_VAL_ 1 A B 1-1;\n// x\n\"//\""), []byte{})
	// Deviations read with a warning: statements without ';', a string
	// over lines holding ';' and a keyword, a 64-bit unsigned signal.
	f.Add([]byte("BA_DEF_ BO_ \"T\" INT 0 9\nBO_ 1 A: 8 N\n SG_ U : 0|64@1+ (1,0) [0|0] \"\" N\nCM_ SG_ 1 U \"a;\nBO_ 2\"\nVAL_ 1 U 1 \"x\""), bytes.Repeat([]byte{0xFF}, 8))
	f.Add([]byte("BO_ 1 A: 8 N\n SG_ S : 0|8@1+ (1,0) [0|0] \"\" N\nSG_MUL_VAL_ 1 S S 0-1\nCM_ \"unterminated"), []byte{1})
	f.Fuzz(func(t *testing.T, text, data []byte) {
		db, err := Parse("fuzz.dbc", text)
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("error %T is not *Error: %v", err, err)
			}
			return
		}
		if len(db.Messages) == 0 {
			t.Fatal("a database without messages loaded")
		}
		var dst []Value
		for i := range db.Messages {
			dst = db.Messages[i].Decode(data, dst)
			if len(dst) != len(db.Messages[i].Signals) {
				t.Fatalf("decoded %d values for %d signals", len(dst), len(db.Messages[i].Signals))
			}
		}
	})
}
