package refdata

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"fieldtap/drivers/pcapfile"
	"fieldtap/drivers/wire"
)

// skipRecorder is a testing.TB whose Skipf records the message and ends
// the goroutine as the real one does, so a skip can be checked.
type skipRecorder struct {
	testing.TB
	skipped string
}

func (r *skipRecorder) Helper() {}

func (r *skipRecorder) Skipf(format string, args ...any) {
	r.skipped = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// skipMessage runs fn with a skipRecorder and returns its skip message,
// "" if fn returned without skipping.
func skipMessage(t *testing.T, fn func(tb testing.TB)) string {
	r := &skipRecorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(r)
	}()
	<-done
	return r.skipped
}

func TestDefaultIsBesideTheModuleRoot(t *testing.T) {
	t.Setenv(EnvVar, "")
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(wd, "..", "..") // tools/refdata
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(root, "..", "shared", "testdata", "sip", "x.pcap")
	if got := Path(t, "sip", "x.pcap"); got != want {
		t.Errorf("Path = %s, want %s", got, want)
	}
}

func TestEnvironmentOverrides(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "can"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "can", "a.dbc"), []byte("VERSION \"\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(EnvVar, dir)
	if got := Dir(t, "can"); got != filepath.Join(dir, "can") {
		t.Errorf("Dir = %s", got)
	}
	if got := File(t, "can", "a.dbc"); got != filepath.Join(dir, "can", "a.dbc") {
		t.Errorf("File = %s", got)
	}
	if got := Dir(t); got != dir {
		t.Errorf("Dir() = %s, want %s", got, dir)
	}
	// A relative value is taken from the module root, not from the
	// package directory a test runs in.
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(EnvVar, filepath.Join("tools", "refdata"))
	if got := Dir(t); got != wd {
		t.Errorf("relative %s: Dir() = %s, want %s", EnvVar, got, wd)
	}
}

func TestAbsentDataSkips(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(EnvVar, dir)
	for _, tc := range []struct {
		name string
		call func(tb testing.TB)
		path string
	}{
		{"Dir", func(tb testing.TB) { Dir(tb, "sip") }, filepath.Join(dir, "sip")},
		{"File", func(tb testing.TB) { File(tb, "j1708", "missing.j1708") }, filepath.Join(dir, "j1708", "missing.j1708")},
	} {
		msg := skipMessage(t, tc.call)
		if msg == "" {
			t.Fatalf("%s: no skip for an absent %s", tc.name, tc.path)
		}
		for _, want := range []string{tc.path, "DESIGN.md §6", "licence", EnvVar} {
			if !strings.Contains(msg, want) {
				t.Errorf("%s: skip message %q does not mention %q", tc.name, msg, want)
			}
		}
		t.Logf("%s: %s", tc.name, msg)
	}
	// Path never skips: seed corpora and globs run without the data.
	if msg := skipMessage(t, func(tb testing.TB) { Path(tb, "sip") }); msg != "" {
		t.Errorf("Path skipped: %s", msg)
	}
}

func TestEachRecord(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var buf bytes.Buffer
	w := pcapgo.NewWriterNanos(&buf)
	if err := w.WriteFileHeader(65535, layers.LinkTypeEthernet); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		data := bytes.Repeat([]byte{byte(i)}, 60)
		ci := gopacket.CaptureInfo{Timestamp: t0.Add(time.Duration(i) * time.Millisecond), CaptureLength: len(data), Length: len(data)}
		if err := w.WritePacket(ci, data); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(t.TempDir(), "x.pcap")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	var got []pcapfile.Record
	EachRecord(t, path, func(rec pcapfile.Record) {
		rec.Data = bytes.Clone(rec.Data)
		got = append(got, rec)
	})
	if len(got) != 3 {
		t.Fatalf("%d records, want 3", len(got))
	}
	for i, rec := range got {
		if !rec.Time.Equal(t0.Add(time.Duration(i)*time.Millisecond)) || rec.Link != wire.LinkEthernet || rec.Data[0] != byte(i) {
			t.Errorf("record %d = %v %v %x…", i, rec.Time, rec.Link, rec.Data[:1])
		}
	}
}
