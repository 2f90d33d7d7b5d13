package firmware

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The capability numbers are the kernel's: capsh, if present, agrees.
func TestCapabilityNumbers(t *testing.T) {
	capsh, err := exec.LookPath("capsh")
	if err != nil {
		t.Skip("no capsh")
	}
	for name, n := range map[string]int{"cap_net_admin": CAP_NET_ADMIN, "cap_net_raw": CAP_NET_RAW} {
		out, err := exec.Command(capsh, fmt.Sprintf("--decode=%x", uint64(1)<<n)).Output()
		if err != nil || !strings.Contains(string(out), name) {
			t.Errorf("capsh --decode bit %d = %q, %v; want %s", n, out, err, name)
		}
	}
}

// A child re-executed as nobody runs with that uid and exactly the two
// capabilities, ambient and effective. Needs root.
func TestRunAsKeepsOnlyNetCaps(t *testing.T) {
	if os.Getenv("FIELDTAP_PRIVDROP_CHILD") == "1" {
		status, _ := os.ReadFile("/proc/self/status")
		os.Stdout.Write(status)
		os.Exit(0)
	}
	if os.Getuid() != 0 {
		t.Skip("needs root")
	}
	t.Setenv("FIELDTAP_PRIVDROP_CHILD", "1")
	r, w, _ := os.Pipe()
	saved := os.Stdout
	os.Stdout = w
	code, err := runAs(context.Background(), copySelf(t), "nobody", []string{"-test.run=^TestRunAsKeepsOnlyNetCaps$"})
	os.Stdout = saved
	w.Close()
	buf := make([]byte, 1<<16)
	n, _ := r.Read(buf)
	if err != nil || code != 0 {
		t.Fatalf("RunAs: code %d, %v", code, err)
	}
	want := fmt.Sprintf("%016x", 1<<CAP_NET_RAW|1<<CAP_NET_ADMIN) // as /proc/PID/status prints it
	fields := map[string]string{}
	for _, line := range strings.Split(string(buf[:n]), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			fields[k] = strings.TrimSpace(v)
		}
	}
	if !strings.HasPrefix(fields["Uid"], "65534") {
		t.Errorf("Uid %q, want nobody (65534)", fields["Uid"])
	}
	for _, k := range []string{"CapEff", "CapPrm", "CapAmb"} {
		if fields[k] != want {
			t.Errorf("%s = %s, want %s (net_raw, net_admin)", k, fields[k], want)
		}
	}
}

// copySelf puts the test binary where nobody may execute it (go test's
// build directory is root-only).
func copySelf(t *testing.T) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, d := range []string{filepath.Dir(dir), dir} { // t.TempDir makes both 0700
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	p := filepath.Join(dir, "privdrop.test")
	if err := os.WriteFile(p, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}
