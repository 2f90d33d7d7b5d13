package daemon

import (
	"os"
	"path/filepath"
	"testing"

	"fieldtap/firmware/config"
	"fieldtap/services/sandbox"
	"fieldtap/tools/refdata"
)

// TestFileCatalogDescribesRealFiles: the catalog lists store.capture_dir
// and store.data_dir and names each file's kind with the --source
// detector: a reference pcapng, a candump log, a J1708 log, a DBC (no
// capture); a symbolic link is neither listed nor read.
func TestFileCatalogDescribesRealFiles(t *testing.T) {
	caps, data := t.TempDir(), t.TempDir()
	copyFile := func(dst string, src ...string) {
		b, err := os.ReadFile(refdata.File(t, src...))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	copyFile(filepath.Join(caps, "call.pcapng"), "sip", "gen-sipp-hold-resume-rfc2833-udp.pcapng")
	copyFile(filepath.Join(caps, "truck.log"), "can", "canarchy_sample.candump")
	copyFile(filepath.Join(caps, "bus.j1708"), "j1708", "canarchy_j1708_sample.j1708")
	copyFile(filepath.Join(data, "sample.dbc"), "can", "canarchy_sample.dbc")
	os.Symlink("/etc/passwd", filepath.Join(caps, "link.pcap"))
	cfg := config.Default()
	cfg.Store.DataDir = data
	files, err := sandbox.New(sandbox.Root{Name: capturesRoot, Dir: caps})
	if err != nil {
		t.Fatal(err)
	}
	cat, err := newFileCatalog(cfg, files)
	if err != nil {
		t.Fatal(err)
	}
	if got := cat.Areas(); len(got) != 2 || got[0] != capturesRoot || got[1] != dataRoot {
		t.Fatalf("areas %v", got)
	}
	want := map[string]string{"captures/call.pcapng": "pcapng", "captures/truck.log": "candump", "captures/bus.j1708": "j1708", "data/sample.dbc": "dbc"}
	listed := 0
	for _, area := range cat.Areas() {
		entries, _, err := cat.List(area)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			listed++
			k, err := cat.Describe(e.Name, 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			if kind, known := want[e.Name]; !known || k.Kind != kind {
				t.Errorf("%s: kind %q, want %q", e.Name, k.Kind, kind)
			}
			if !k.Untimed && k.Kind != "" && (k.First.IsZero() || k.Last.Before(k.First)) {
				t.Errorf("%s: %+v", e.Name, k)
			}
			t.Logf("%s: %q %s to %s", e.Name, k.Kind, k.First, k.Last)
		}
	}
	if listed != len(want) {
		t.Errorf("%d files listed, want %d", listed, len(want))
	}
	if _, err := cat.Describe("captures/link.pcap", 1<<20); err == nil {
		t.Error("a symbolic link was read")
	}
}
