package main

import (
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// statusURLRe finds the status page's address in fieldtapd's log.
var statusURLRe = regexp.MustCompile(`serving the status page" page=(http://\S+)/status`)

// box is a running fieldtapd with its log.
type box struct {
	cmd    *exec.Cmd
	stderr *lockedBuffer
	base   string        // http://host:port of the status page
	exited chan struct{} // closed once fieldtapd has exited
}

// startDaemon runs fieldtapd on the config body (status page on a free
// loopback port, MCP over HTTP on another) and waits for the page.
func startDaemon(t *testing.T, body string, args ...string) *box {
	t.Helper()
	cfg := filepath.Join(t.TempDir(), "fieldtapd.toml")
	if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	d := &box{stderr: &lockedBuffer{}, exited: make(chan struct{})}
	d.cmd = exec.Command(binary, append([]string{"--config", cfg, "--mcp-transport", "http", "--mcp-listen", "127.0.0.1:0"}, args...)...)
	d.cmd.Stderr = d.stderr
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = d.cmd.Wait(); close(d.exited) }()
	t.Cleanup(func() { d.stop(syscall.SIGTERM) })
	deadline := time.Now().Add(giveUp)
	for {
		if m := statusURLRe.FindStringSubmatch(d.stderr.String()); m != nil {
			d.base = m[1]
			return d
		}
		select {
		case <-d.exited:
			t.Fatalf("fieldtapd exited:\n%s", d.stderr)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("fieldtapd never served its status page:\n%s", d.stderr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stop signals fieldtapd and waits for it.
func (d *box) stop(sig syscall.Signal) {
	select {
	case <-d.exited:
		return
	default:
	}
	_ = d.cmd.Process.Signal(sig)
	<-d.exited
}

// get fetches path from the status server.
func (d *box) get(t *testing.T, path string) []byte {
	t.Helper()
	res, err := http.Get(d.base + path)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("GET %s: %d %v\n%s", path, res.StatusCode, err, b)
	}
	return b
}

// armedConfig is the sim board armed by its arm file, as the transmit
// end-to-end tests arm it; top goes before the tables, tables after.
func armedConfig(t *testing.T, top, tables string) string {
	t.Helper()
	arm := filepath.Join(t.TempDir(), "arm")
	if err := os.WriteFile(arm, []byte("armed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return "board = \"sim\"\n" + top + "\n[status]\nlisten = [\"127.0.0.1:0\"]\n[transmit]\narm_file = \"" + arm + "\"\n" + strings.TrimSpace(tables) + "\n"
}
