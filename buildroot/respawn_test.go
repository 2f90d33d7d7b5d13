package buildroot

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// respawnGiveUp bounds each wait for the loop; it is not a speed claim.
const respawnGiveUp = 30 * time.Second

// TestInitScriptRespawns runs S90fieldtapd's respawn loop under /bin/sh
// and, where it is installed, busybox's sh (the image's shell), with a
// stand-in daemon that is killed with SIGKILL twice (as a crash or kill -9
// would end fieldtapd) and then stays up: the loop starts it again each
// time and logs why; TERM to the loop stops the daemon and the loop.
// (hwtest runs the same script under busybox on the emulated board.)
func TestInitScriptRespawns(t *testing.T) {
	shells := map[string][]string{"sh": {"/bin/sh"}}
	if bb, err := exec.LookPath("busybox"); err == nil {
		shells["busybox"] = []string{bb, "sh"}
	} else {
		t.Log("no busybox on PATH: the loop runs under /bin/sh only (apt-get install busybox-static for the image's shell)")
	}
	for name, sh := range shells {
		t.Run(name, func(t *testing.T) { testRespawn(t, sh) })
	}
}

func testRespawn(t *testing.T, sh []string) {
	dir := t.TempDir()
	starts, log := filepath.Join(dir, "starts"), filepath.Join(dir, "fieldtapd.log")
	fake := filepath.Join(dir, "fieldtapd")
	// Each start appends its pid; the first two kill themselves with
	// SIGKILL, the third becomes a long sleep.
	script := "#!/bin/sh\necho $$ >>" + starts + "\n" +
		"[ $(wc -l <" + starts + ") -lt 3 ] && kill -9 $$\nexec sleep 300\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	loop := exec.Command(sh[0], append(sh[1:], filepath.Join("package", "fieldtap", "S90fieldtapd"), "respawn")...)
	loop.Env = append(os.Environ(), "FIELDTAPD_BIN="+fake, "FIELDTAPD_LOG="+log)
	if err := loop.Start(); err != nil {
		t.Fatal(err)
	}
	defer loop.Process.Kill()
	pids := func() []string {
		b, _ := os.ReadFile(starts)
		return strings.Fields(string(b))
	}
	for deadline := time.Now().Add(respawnGiveUp); len(pids()) < 3; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(log)
			t.Fatalf("%d starts, want 3 (two killed, one running); log:\n%s", len(pids()), b)
		}
	}
	b, _ := os.ReadFile(log)
	if n := strings.Count(string(b), "ended (status 137); starting it again"); n != 2 {
		t.Errorf("log says %d restarts after SIGKILL, want 2:\n%s", n, b)
	}
	last, _ := strconv.Atoi(pids()[2])
	if err := loop.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- loop.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("the loop ended with %v", err)
		}
	case <-time.After(respawnGiveUp):
		t.Fatal("TERM did not stop the loop")
	}
	if syscall.Kill(last, 0) == nil {
		t.Errorf("the daemon (pid %d) outlived its loop", last)
		syscall.Kill(last, syscall.SIGKILL)
	}
	if len(pids()) != 3 {
		t.Errorf("%d starts after TERM, want no more than 3", len(pids()))
	}
}
