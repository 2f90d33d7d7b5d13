package mcp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"fieldtap/services/ports"
)

// CaptureOpener loads a file from the capture directory
// (store.capture_dir) as a new read-only port while the box runs, within
// the budget store.opened_captures reserved (the daemon's opener).
type CaptureOpener interface {
	OpenCapture(ctx context.Context, name string) (ports.Status, error)
}

// ErrCaptureRefused is what a CaptureOpener's refusals wrap; anything else
// is a failure of the box, not of the request.
var ErrCaptureRefused = errors.New("open_capture refused")

// openCaptureMaxWait bounds how long open_capture waits for the file to
// be read whole; capture_status shows the port after that.
const openCaptureMaxWait = 60

type captureNameArg string

func (captureNameArg) argSchema() *jsonschema.Schema {
	s := &jsonschema.Schema{Type: "string", Description: "file name inside the capture directory (store.capture_dir), e.g. truck.log or site/call.pcapng; no .., no absolute path, no symbolic link"}
	one, most := 1, 255
	s.MinLength, s.MaxLength = &one, &most
	return s
}

type waitSecondsArg int

func (waitSecondsArg) argSchema() *jsonschema.Schema {
	return intSchema(fmt.Sprintf("seconds to wait for the file to be read whole, 0 to %d (default 10)", openCaptureMaxWait), 0, openCaptureMaxWait)
}

type openCaptureIn struct {
	Name captureNameArg  `json:"name"`
	Wait *waitSecondsArg `json:"wait_s,omitempty"`
}

type openCaptureOut struct {
	Port   ports.Status `json:"opened" jsonschema:"the new port (file1, file2 … after the --source files) as capture_status shows it"`
	Loaded bool         `json:"loaded" jsonschema:"true once every frame of the file reached the stores; false: still loading when wait_s ran out (capture_status shows the rest)"`
}

var openCapture = tool[openCaptureIn, openCaptureOut]{
	name:  "open_capture",
	reads: readsNothing,
	desc:  "Load a capture file from the box's capture directory (pcap, pcapng, candump -l, J1708 log) as a new read-only port, within the budget store.opened_captures reserves; waits up to wait_s (10 s) for it to load, with progress.",
	hints: writesFile(),
	run: func(c *call, in openCaptureIn) (openCaptureOut, error) {
		if strings.TrimSpace(string(in.Name)) == "" {
			return openCaptureOut{}, argErr("name", "give a file name inside store.capture_dir", "is empty")
		}
		st, err := c.d.BlackBox.Captures.OpenCapture(c.ctx, string(in.Name))
		switch {
		case errors.Is(err, ErrCaptureRefused):
			return openCaptureOut{}, failErr(CodeUnavailable, err.Error(), "store.capture_dir holds the files an operator copied onto the box; store.opened_captures reserves their ports at start-up (docs/recorder.md)")
		case err != nil:
			return openCaptureOut{}, err
		}
		// The registry's view: the opener's first status may carry nil
		// maps, which the output schema does not allow.
		st = portNamed(c.d, st)
		wait := 10 * time.Second
		if in.Wait != nil {
			wait = time.Duration(*in.Wait) * time.Second
		}
		deadline := time.Now().Add(wait)
		for !st.SourceExhausted && time.Now().Before(deadline) {
			c.progress(float64(st.Frames), 0, fmt.Sprintf("%s: %d frames read", st.Name, st.Frames))
			select {
			case <-c.ctx.Done():
				return openCaptureOut{Port: st}, nil
			case <-time.After(100 * time.Millisecond):
			}
			st = portNamed(c.d, st)
		}
		if !st.SourceExhausted {
			c.warnf("%s is still loading: capture_status shows its frames and source_exhausted", st.Name)
		}
		return openCaptureOut{Port: st, Loaded: st.SourceExhausted}, nil
	},
}

// portNamed is the newest status of st's port, or st when the registry no
// longer lists it.
func portNamed(d Deps, st ports.Status) ports.Status {
	for _, p := range d.Ports.Snapshot() {
		if p.Name == st.Name {
			return p
		}
	}
	return st
}
