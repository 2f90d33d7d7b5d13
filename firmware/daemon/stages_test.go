package daemon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"fieldtap/firmware/config"
)

// run is what fake stages did, in order: "start x" and "stop x".
type run struct{ events []string }

// stage is a fake named name: its start fails with failStart when that
// is set (and returns a stop anyway, which must never be called), its
// stop returns stopErr, and noStop makes its start return no stop.
func (r *run) stage(name string, failStart, stopErr error, noStop bool) stage {
	return stage{name: name, start: func(context.Context) (func() error, error) {
		r.events = append(r.events, "start "+name)
		stop := func() error {
			r.events = append(r.events, "stop "+name)
			return stopErr
		}
		switch {
		case failStart != nil:
			return stop, failStart
		case noStop:
			return nil, nil
		}
		return stop, nil
	}}
}

// line is one logged record: its level, message and stage attribute.
type line struct {
	level        slog.Level
	msg, stage   string
	hasErr, took bool
}

// lines records what the runner logs.
type lines struct {
	mu  sync.Mutex
	got []line
}

func (l *lines) Enabled(context.Context, slog.Level) bool { return true }
func (l *lines) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *lines) WithGroup(string) slog.Handler            { return l }
func (l *lines) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	ln := line{level: r.Level, msg: r.Message}
	r.Attrs(func(a slog.Attr) bool {
		switch a.Key {
		case "stage":
			ln.stage = a.Value.String()
		case "err":
			ln.hasErr = true
		case "took":
			ln.took = true
		}
		return true
	})
	l.got = append(l.got, ln)
	return nil
}

// of is the stages logged at level with msg, in order; every such line
// must say how long the stage took.
func (l *lines) of(t *testing.T, level slog.Level, msg string) []string {
	t.Helper()
	var names []string
	for _, ln := range l.got {
		if ln.level == level && ln.msg == msg {
			if !ln.took {
				t.Errorf("%s %q for stage %s does not say how long it took", level, msg, ln.stage)
			}
			names = append(names, ln.stage)
		}
	}
	return names
}

func TestStagesStopInReverseOnce(t *testing.T) {
	var r run
	var log lines
	up, err := startStages(context.Background(), slog.New(&log), []stage{
		r.stage("board", nil, nil, false),
		r.stage("sources", nil, nil, true),
		r.stage("capture", nil, nil, false),
		r.stage("mcp endpoint", nil, nil, false),
	})
	if err != nil {
		t.Fatal(err)
	}
	up.stop()
	up.stop() // a second stop stops nothing again
	want := []string{"start board", "start sources", "start capture", "start mcp endpoint", "stop mcp endpoint", "stop capture", "stop board"}
	if !slices.Equal(r.events, want) {
		t.Errorf("events %q, want %q", r.events, want)
	}
	if got, want := log.of(t, slog.LevelDebug, "stage started"), []string{"board", "sources", "capture", "mcp endpoint"}; !slices.Equal(got, want) {
		t.Errorf("debug lines of starts name %q, want %q", got, want)
	}
	if got, want := log.of(t, slog.LevelDebug, "stage stopped"), []string{"mcp endpoint", "capture", "board"}; !slices.Equal(got, want) {
		t.Errorf("debug lines of stops name %q, want %q", got, want)
	}
}

// TestFailedStartStopsTheStartedInReverse fails each stage in turn: the
// stages before it stop in reverse, each once, the failed one's stop and
// the stages after it never run, and its error comes back as it is.
func TestFailedStartStopsTheStartedInReverse(t *testing.T) {
	names := []string{"mcp access", "board", "recorder", "capture", "transmit"}
	for k, failing := range names {
		t.Run(failing, func(t *testing.T) {
			var r run
			var log lines
			why := fmt.Errorf("%s: no", failing)
			var stages []stage
			for i, name := range names {
				var fail error
				if i == k {
					fail = why
				}
				stages = append(stages, r.stage(name, fail, nil, false))
			}
			up, err := startStages(context.Background(), slog.New(&log), stages)
			if !errors.Is(err, why) || up != nil {
				t.Fatalf("startStages = %v, %v: want nil and the error of %s", up, err, failing)
			}
			var want []string
			for _, name := range names[:k+1] {
				want = append(want, "start "+name)
			}
			for i := k - 1; i >= 0; i-- {
				want = append(want, "stop "+names[i])
			}
			if !slices.Equal(r.events, want) {
				t.Errorf("events %q, want %q", r.events, want)
			}
			failed := log.of(t, slog.LevelError, "stage failed to start; stopping the ones before it")
			if !slices.Equal(failed, []string{failing}) || !slices.ContainsFunc(log.got, func(l line) bool { return l.level == slog.LevelError && l.hasErr }) {
				t.Errorf("error lines name %q, want %s with its error", failed, failing)
			}
		})
	}
}

// TestPanickingStartStopsTheStarted: a start that panics has the stages
// before it stopped in reverse, and the panic goes on.
func TestPanickingStartStopsTheStarted(t *testing.T) {
	var r run
	var log lines
	stages := []stage{
		r.stage("mcp access", nil, nil, false),
		r.stage("board", nil, nil, false),
		{name: "stores", start: func(context.Context) (func() error, error) { panic("stores: out of range") }},
		r.stage("capture", nil, nil, false),
	}
	defer func() {
		if p := recover(); p != "stores: out of range" {
			t.Errorf("recovered %v, want the stage's panic", p)
		}
		want := []string{"start mcp access", "start board", "stop board", "stop mcp access"}
		if !slices.Equal(r.events, want) {
			t.Errorf("events %q, want %q", r.events, want)
		}
		if got := log.of(t, slog.LevelDebug, "stage stopped"); !slices.Equal(got, []string{"board", "mcp access"}) {
			t.Errorf("debug lines of stops name %q, want board, mcp access", got)
		}
	}()
	startStages(context.Background(), slog.New(&log), stages)
	t.Error("startStages returned after a stage panicked")
}

// TestStopErrorIsLoggedAndTheRestStop: a stop that fails is logged at
// error level by name, and the stages before it still stop.
func TestStopErrorIsLoggedAndTheRestStop(t *testing.T) {
	var r run
	var log lines
	up, err := startStages(context.Background(), slog.New(&log), []stage{
		r.stage("mcp access", nil, nil, false),
		r.stage("recorder", nil, errors.New("disk full"), false),
		r.stage("capture", nil, nil, false),
	})
	if err != nil {
		t.Fatal(err)
	}
	up.stop()
	want := []string{"start mcp access", "start recorder", "start capture", "stop capture", "stop recorder", "stop mcp access"}
	if !slices.Equal(r.events, want) {
		t.Errorf("events %q, want %q", r.events, want)
	}
	if got := log.of(t, slog.LevelError, "stage stopped with an error"); !slices.Equal(got, []string{"recorder"}) {
		t.Errorf("error lines name %q, want recorder", got)
	}
	if got, want := log.of(t, slog.LevelDebug, "stage stopped"), []string{"capture", "mcp access"}; !slices.Equal(got, want) {
		t.Errorf("debug lines of stops name %q, want %q", got, want)
	}
}

// TestRunStopsInTheDocumentedOrder runs the real box (board none, a
// candump file, the recorder on, MCP over stdio) and closes stdin: the
// stages stop in the order Run's doc comment and docs/architecture.md
// give.
func TestRunStopsInTheDocumentedOrder(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "truck.log"), truckLog(10), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.Board, cfg.Sources = config.BoardNone, []string{filepath.Join(dir, "truck.log")}
	cfg.MCP.Transport, cfg.Status.Listen = "stdio", nil
	cfg.Store.ExportDir, cfg.Store.DataDir, cfg.Store.CaptureDir = t.TempDir(), t.TempDir(), t.TempDir()
	cfg.Recorder.Enabled, cfg.Recorder.Dir, cfg.Recorder.EvidenceDir = true, t.TempDir(), t.TempDir()
	checked, err := cfg.Check()
	if err != nil {
		t.Fatal(err)
	}
	var log lines
	stdin, closeStdin := io.Pipe()
	closeStdin.Close() // the client is gone at once
	if err := Run(context.Background(), checked, "test", slog.New(&log), IO{Stdin: stdin, Stdout: io.Discard}); err != nil {
		t.Fatal(err)
	}
	want := []string{"mcp endpoint", "transmit", "capture", "recorder writer", "recorder", "exporters", "board", "mcp access"}
	if got := log.of(t, slog.LevelDebug, "stage stopped"); !slices.Equal(got, want) {
		t.Errorf("stages stopped %q, want %q", got, want)
	}
}
