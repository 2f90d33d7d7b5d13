package refdata

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"fieldtap/drivers/pcapfile"
)

// EnvVar names the environment variable that, when set and not empty,
// replaces <module root>/../shared/testdata. A relative value is taken
// from the module root, since every package's tests run in their own
// directory.
const EnvVar = "FIELDTAP_TESTDATA"

// moduleRoot walks up from the working directory (a package's directory
// under go test) to the directory holding go.mod.
var moduleRoot = sync.OnceValues(func() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if st, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil && !st.IsDir() {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod in the working directory or above it")
		}
		dir = parent
	}
})

// Path returns where the reference data sub (joined below the data root)
// would be, without checking that it is there. Dir and File are for tests
// that need the data; Path is for what runs with or without it, such as a
// fuzz seed corpus or a glob that may match nothing.
func Path(t testing.TB, sub ...string) string {
	t.Helper()
	root, err := moduleRoot()
	if err != nil {
		t.Fatalf("refdata: %v", err)
	}
	base := filepath.Join(root, "..", "shared", "testdata")
	if env := os.Getenv(EnvVar); env != "" {
		base = env
		if !filepath.IsAbs(base) {
			base = filepath.Join(root, base)
		}
	}
	return filepath.Join(append([]string{base}, sub...)...)
}

// Dir returns the reference data directory sub (for example "sip" or
// "can"), skipping the test when it is absent.
func Dir(t testing.TB, sub ...string) string {
	t.Helper()
	p := present(t, sub)
	if st, err := os.Stat(p); err == nil && !st.IsDir() {
		t.Fatalf("refdata: %s is not a directory", p)
	}
	return p
}

// File returns the reference data file sub (for example "sip",
// "RTP-Protocol.pcap"), skipping the test when it is absent.
func File(t testing.TB, sub ...string) string {
	t.Helper()
	p := present(t, sub)
	if st, err := os.Stat(p); err == nil && st.IsDir() {
		t.Fatalf("refdata: %s is a directory, not a file", p)
	}
	return p
}

func present(t testing.TB, sub []string) string {
	t.Helper()
	p := Path(t, sub...)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("reference data %s not found (%v): it is kept outside the repository because several files "+
			"lack a licence to redistribute them (DESIGN.md §6); tests look in ../shared/testdata beside the "+
			"repository, or in $%s when set", p, errors.Unwrap(err), EnvVar)
	}
	return p
}

// EachRecord reads the capture file at path (pcap or pcapng) to its end
// and calls fn with every record in order; a file that does not open or
// read cleanly fails the test. rec.Data is only valid during the call:
// clone it to keep it.
func EachRecord(t testing.TB, path string, fn func(rec pcapfile.Record)) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rd, err := pcapfile.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	for {
		rec, err := rd.Next()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		fn(rec)
	}
}
