package upload

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzUpload: whatever name, size, digest, offset and bytes a caller
// sends, the table answers a refusal or does what it states, no file
// lands outside its directory, and no partial is visible under a name a
// listing shows.
func FuzzUpload(f *testing.F) {
	f.Add("truck.log", int64(4), strings.Repeat("ab", 32), int64(0), []byte("ok12"))
	f.Add("../x", int64(1), strings.Repeat("0", 64), int64(0), []byte("o"))
	f.Add(".hidden", int64(10), "zz", int64(5), []byte{})
	f.Add("a\x00b.pcap", int64(-1), strings.Repeat("F", 64), int64(-3), []byte("okok"))
	f.Fuzz(func(t *testing.T, name string, size int64, digest string, off int64, data []byte) {
		dir := t.TempDir()
		tb, err := New([]Area{{Name: "captures", Dir: dir, Check: checkPrefix}}, Limits{MaxFileBytes: 1 << 16, MaxTotalBytes: 1 << 16})
		if err != nil {
			t.Fatal(err)
		}
		b, err := tb.Begin("captures", name, size, digest)
		if err != nil {
			if !errors.Is(err, ErrRefused) {
				t.Fatalf("begin %q: %v is no refusal", name, err)
			}
			return
		}
		if next, err := tb.Chunk(b.ID, off, data); err == nil && next != off+int64(len(data)) {
			t.Fatalf("chunk at %d of %d bytes stated next %d", off, len(data), next)
		} else if err != nil && !errors.Is(err, ErrRefused) {
			t.Fatalf("chunk: %v is no refusal", err)
		}
		if _, err := tb.Finish(b.ID); err != nil && !errors.Is(err, ErrRefused) {
			t.Fatalf("finish: %v is no refusal", err)
		}
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			if e.Name() != name && !strings.HasPrefix(e.Name(), partPrefix) {
				t.Fatalf("%s in the directory; the upload was %q", e.Name(), name)
			}
		}
		if parent, _ := os.ReadDir(filepath.Dir(dir)); len(parent) != 1 {
			t.Fatalf("the upload wrote beside its directory: %d entries", len(parent))
		}
	})
}
