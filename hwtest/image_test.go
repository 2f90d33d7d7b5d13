package hwtest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The archive round-trips through the system's cpio, the reader the
// kernel's format is defined against.
func TestCPIORoundTrip(t *testing.T) {
	cpio, err := exec.LookPath("cpio")
	if err != nil {
		t.Skip("no cpio on this machine")
	}
	var buf bytes.Buffer
	err = WriteCPIO(&buf, map[string]File{
		"bin":        {Mode: ModeDir | 0o755},
		"bin/hello":  {Mode: ModeFile | 0o755, Data: []byte("hi\n")},
		"bin/odd":    {Mode: ModeFile | 0o644, Data: []byte("12345")},
		"bin/sh":     {Mode: ModeSymlink | 0o777, Data: []byte("hello")},
		"etc":        {Mode: ModeDir | 0o755},
		"etc/passwd": {Mode: ModeFile | 0o644, Data: []byte("root:x:0:0::/:/bin/sh\n")},
	})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cmd := exec.Command(cpio, "-idm", "--quiet")
	cmd.Dir, cmd.Stdin = dir, &buf
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("cpio: %v: %s", err, out)
	}
	for name, want := range map[string]string{"bin/hello": "hi\n", "bin/odd": "12345", "bin/sh": "hi\n"} {
		if b, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(b) != want {
			t.Errorf("%s = %q, %v; want %q", name, b, err, want)
		}
	}
	if fi, err := os.Stat(filepath.Join(dir, "bin/hello")); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("bin/hello mode: %v %v", fi, err)
	}
}

// Dependencies come first, each module once, and built-in ones are skipped.
func TestLoadOrder(t *testing.T) {
	deps := map[string][]string{
		"kernel/net/can/can.ko":            nil,
		"kernel/net/can/can-raw.ko":        {"can"},
		"kernel/drivers/can/can-dev.ko":    nil,
		"kernel/drivers/can/sja1000.ko":    {"can-dev"},
		"kernel/drivers/can/kvaser_pci.ko": {"sja1000", "can-dev"},
	}
	var files []string
	for p := range deps {
		files = append(files, p)
	}
	got, err := LoadOrder(files, func(p string) ([]string, error) { return deps[p], nil }, []string{"can_raw", "kvaser_pci", "virtio_pci"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range got {
		names = append(names, modName(p))
	}
	if want := "can can_raw can_dev sja1000 kvaser_pci"; strings.Join(names, " ") != want {
		t.Errorf("order = %v, want %s", names, want)
	}
	cyc := func(p string) ([]string, error) { return []string{"b"}, nil }
	if _, err := LoadOrder([]string{"a.ko", "b.ko"}, cyc, []string{"a"}); err == nil {
		t.Error("a cycle (b depends on itself) was not reported")
	}
}

func TestParseDepends(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"license=GPL\x00depends=sja1000,can-dev\x00intree=Y\x00", "sja1000 can-dev"},
		{"license=GPL\x00depends=\x00", ""},
		{"", ""},
	} {
		if got := strings.Join(parseDepends([]byte(tc.in)), " "); got != tc.want {
			t.Errorf("parseDepends(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
