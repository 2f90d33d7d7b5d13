package mcp

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"fieldtap/services/ports"
)

// loadingPorts is a registry whose one opened port reads a few frames
// each time it is looked at, then is exhausted.
type loadingPorts struct {
	mu     sync.Mutex
	opened *ports.Status
}

func (p *loadingPorts) Snapshot() []ports.Status {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.opened == nil {
		return nil
	}
	if p.opened.Frames < 30 {
		p.opened.Frames += 10
	} else {
		p.opened.SourceExhausted = true
	}
	st := *p.opened
	st.Errors, st.Drops = map[string]uint64{}, map[string]uint64{} // as ports.Registry fills them
	return []ports.Status{st}
}

// fakeOpener opens names it was given, refusing the others as the
// daemon's opener does.
type fakeOpener struct {
	p     *loadingPorts
	files map[string]string // name → kind
}

func (o fakeOpener) OpenCapture(_ context.Context, name string) (ports.Status, error) {
	kind, ok := o.files[name]
	if !ok {
		return ports.Status{}, fmt.Errorf("%w: captures/%s: no such file", ErrCaptureRefused, name)
	}
	// A port's own first status, nil maps and all, as the daemon's opener returns it.
	st := ports.Status{Name: "file1", Kind: kind, Source: "file:" + name, Live: false}
	o.p.mu.Lock()
	o.p.opened = &st
	o.p.mu.Unlock()
	return st, nil
}

// TestOpenCapture: a file the opener takes comes back as its port once
// loaded (the answer valid against the output schema); a refusal is
// UNAVAILABLE naming the file; a missing name is INVALID_ARGUMENT (a Deps
// without an opener is refused by NewServer: TestNewServerRefusesAMissingNeed).
func TestOpenCapture(t *testing.T) {
	lp := &loadingPorts{}
	d := withPorts(testDeps(), lp)
	d.BlackBox.Captures = fakeOpener{p: lp, files: map[string]string{"truck.log": "can"}}
	c := newChecker(t, testServer(t, d, blackboxTools...))

	_, env := c.call("open_capture", map[string]any{"name": "truck.log"})
	data, _ := env["data"].(map[string]any)
	port, _ := data["opened"].(map[string]any)
	if env["ok"] != true || data["loaded"] != true || port["name"] != "file1" || port["kind"] != "can" || port["frames"] != float64(30) {
		t.Errorf("open truck.log: %v, want file1 loaded with 30 frames", env)
	}
	_, env = c.call("open_capture", map[string]any{"name": "truck.log", "wait_s": 0})
	if data, _ := env["data"].(map[string]any); env["ok"] != true || data["loaded"] != false || !strings.Contains(fmt.Sprint(env["warnings"]), "still loading") {
		t.Errorf("open with wait_s 0: %v, want it answered at once, loading, with a warning", env)
	}
	_, env = c.call("open_capture", map[string]any{"name": "elsewhere.log"})
	if code := errCode(env); code != CodeUnavailable || !strings.Contains(fmt.Sprint(env["errors"]), "captures/elsewhere.log") {
		t.Errorf("refused file: %v", env)
	}
	_, env = c.call("open_capture", map[string]any{})
	if code := errCode(env); code != CodeInvalidArgument {
		t.Errorf("no name: %v", env)
	}
}

func errCode(env map[string]any) string {
	errs, _ := env["errors"].([]any)
	if len(errs) == 0 {
		return ""
	}
	e, _ := errs[0].(map[string]any)
	s, _ := e["code"].(string)
	return s
}
