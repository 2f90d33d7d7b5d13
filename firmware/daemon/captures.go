package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"fieldtap/drivers/filesource"
	"fieldtap/mcp"
	"fieldtap/services/ports"
	"fieldtap/services/sandbox"
	"fieldtap/services/tlsdecrypt"
)

// capturesRoot is the sandbox root of store.capture_dir.
const capturesRoot = "captures"

// ErrCaptureRefused wraps every capture the opener will not load: the
// MCP tool answers it as a refusal, anything else as a failure.
var ErrCaptureRefused = mcp.ErrCaptureRefused

// captureOpener loads a capture file an operator placed in
// store.capture_dir as a new read-only port while the box runs
// (open_capture's engine): the name is resolved inside the resolved
// directory, symbolic links refused (services/sandbox), the kind read
// from the content (drivers/filesource).
type captureOpener struct {
	files *sandbox.Sandbox
	an    *analysers
	reg   *ports.Registry
	rec   *recording
	depth int
	slots int // store.opened_captures: ports the budget planned for it
	log   *slog.Logger

	mu     sync.Mutex
	ctx    context.Context // the ports' context: nil until running, done at shutdown
	wg     *sync.WaitGroup
	next   int // the next fileN number; the --source files have the ones before
	opened int
}

// start lets OpenCapture run ports under ctx, counted in wg.
func (o *captureOpener) start(ctx context.Context, wg *sync.WaitGroup) {
	o.mu.Lock()
	o.ctx, o.wg = ctx, wg
	o.mu.Unlock()
}

// stop refuses further opens; the daemon calls it before waiting for
// the ports, so no port starts while they drain.
func (o *captureOpener) stop() {
	o.mu.Lock()
	o.ctx = nil
	o.mu.Unlock()
}

// Captures lists the files in store.capture_dir open_capture can load.
func (o *captureOpener) Captures() ([]sandbox.Entry, bool, error) { return o.files.List(capturesRoot) }

// OpenCapture loads the file name (relative to store.capture_dir) as a
// new port, file1, file2 … after the --source files, and returns its
// first status. It refuses names outside the directory, symbolic links,
// files that are no capture fieldtap reads, and more opens in one run
// than store.opened_captures planned budget shares for.
func (o *captureOpener) OpenCapture(ctx context.Context, name string) (ports.Status, error) {
	path, err := o.files.Path(capturesRoot + "/" + strings.TrimPrefix(name, "/"))
	if err != nil {
		return ports.Status{}, fmt.Errorf("%w: %w", ErrCaptureRefused, err)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	switch {
	case o.ctx == nil || o.ctx.Err() != nil:
		return ports.Status{}, fmt.Errorf("%w: the box is not running ports", ErrCaptureRefused)
	case o.slots == 0:
		return ports.Status{}, fmt.Errorf("%w: store.opened_captures is 0, so the memory budget reserves no port for an opened capture (docs/recorder.md)", ErrCaptureRefused)
	case o.opened >= o.slots:
		return ports.Status{}, fmt.Errorf("%w: %d captures opened in this run, all that store.opened_captures (%d) planned memory for", ErrCaptureRefused, o.opened, o.slots)
	}
	portName := fileName(o.next - 1)
	src, err := filesource.Open(portName, path, o.log.With("port", portName))
	if err != nil {
		return ports.Status{}, fmt.Errorf("%w: %w", ErrCaptureRefused, err)
	}
	takeSecrets(src, func() *tlsdecrypt.Keys { return o.an.tlsKeys }, o.log)
	p, err := newPort(src, o.an, portOptions{depth: o.depth})
	if err != nil {
		return ports.Status{}, fmt.Errorf("%w: %w", ErrCaptureRefused, err)
	}
	o.rec.attach(p, o.an)
	o.next++
	o.opened++
	o.reg.Add(p.status)
	p.run(o.ctx, o.wg, o.log)
	o.log.Info("capture opened", "port", portName, "file", path)
	return p.status(), nil
}
