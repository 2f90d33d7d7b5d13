package firmware

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"os/user"
	"strconv"
	"syscall"
)

// From include/uapi/linux/capability.h.
const (
	CAP_NET_ADMIN = 12 // CAN bitrate and listen-only, link flags over netlink
	CAP_NET_RAW   = 13 // AF_PACKET and AF_CAN sockets
)

// Capabilities are the only ones the unprivileged fieldtapd keeps.
var Capabilities = []uintptr{CAP_NET_RAW, CAP_NET_ADMIN}

// RunAs re-executes the running program as username with only
// Capabilities (as ambient capabilities, so they survive the exec), the
// user's groups (dialout for ttys, gpio for /dev/gpiochip*), and
// DroppedEnv set; it forwards SIGINT and SIGTERM and returns the child's
// exit code. Called by root only; the child sees os.Getuid() != 0.
func RunAs(ctx context.Context, username string, args []string) (int, error) {
	self, err := os.Executable() // the real path, so ps shows fieldtapd, not exe
	if err != nil {
		return 0, err
	}
	return runAs(ctx, self, username, args)
}

func runAs(ctx context.Context, program, username string, args []string) (int, error) {
	if os.Getuid() != 0 {
		return 0, errors.New("privilege drop needs root")
	}
	cred, err := credential(username)
	if err != nil {
		return 0, err
	}
	cmd := exec.Command(program, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), DroppedEnv+"=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, AmbientCaps: Capabilities}
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("re-exec as %s: %w", username, err)
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for {
		select {
		case s := <-sigs:
			_ = cmd.Process.Signal(s)
		case <-ctx.Done():
			_ = cmd.Process.Signal(syscall.SIGTERM)
			ctx = context.Background() // signal once, then wait
		case err := <-done:
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				return ee.ExitCode(), nil
			}
			return 0, err
		}
	}
}

// credential looks the user up in /etc/passwd and /etc/group (pure Go:
// no cgo, no NSS).
func credential(username string) (*syscall.Credential, error) {
	u, err := user.Lookup(username)
	if err != nil {
		return nil, fmt.Errorf("user %s: %w", username, err)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err := errors.Join(err1, err2); err != nil {
		return nil, fmt.Errorf("user %s: %w", username, err)
	}
	if uid == 0 {
		return nil, fmt.Errorf("user %s is root: nothing would be dropped", username)
	}
	c := &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	ids, _ := u.GroupIds() // no supplementary groups is not an error
	for _, g := range ids {
		if n, err := strconv.ParseUint(g, 10, 32); err == nil {
			c.Groups = append(c.Groups, uint32(n))
		}
	}
	return c, nil
}
