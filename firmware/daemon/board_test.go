package daemon

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"sync"
	"testing"
	"time"

	"fieldtap/board"
	"fieldtap/firmware/config"
	"fieldtap/services/ports"
)

// TestStartBoardReportsParts runs bring-up on boards this host can run and
// reads back what capture_status will show.
func TestStartBoardReportsParts(t *testing.T) {
	armPath := filepath.Join(t.TempDir(), "arm")
	if err := os.WriteFile(armPath, []byte("armed\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	simSkip := "the simulated board replays generated traffic; nothing to prepare"
	simParts := []ports.BoardPart{
		{Part: "span", Outcome: ports.OutcomeSkipped, Detail: simSkip},
		{Part: "gadget", Outcome: ports.OutcomeSkipped, Detail: simSkip},
		{Part: "gpio", Outcome: ports.OutcomeUp, Detail: "status LED sim:0, activity LED sim:1, armed LED sim:2"},
	}
	for _, tc := range []struct {
		name      string
		board     string
		armFile   string
		wantParts []ports.BoardPart
		wantArm   ports.Arm
	}{
		{name: "none", board: "none", wantParts: []ports.BoardPart{},
			wantArm: ports.Arm{Input: ports.ArmInputNone, Where: "board none: no arm input"}},
		{name: "sim without arm file", board: "sim", wantParts: simParts,
			wantArm: ports.Arm{Input: ports.ArmInputNone, Where: "profile sim names no arm_input"}},
		{name: "sim with arm file", board: "sim", armFile: armPath, wantParts: simParts,
			wantArm: ports.Arm{On: true, Input: ports.ArmInputFile, Where: armPath}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := config.Default()
			cfg.Board, cfg.Transmit.ArmFile = tc.board, tc.armFile
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var reg ports.Registry
			var wg sync.WaitGroup
			defer func() { cancel(); wg.Wait() }()
			if _, err := startBoard(ctx, &wg, cfg, &reg, slog.New(slog.NewTextHandler(io.Discard, nil))); err != nil {
				t.Fatal(err)
			}
			if got := reg.BoardParts(); !reflect.DeepEqual(got, tc.wantParts) {
				t.Errorf("parts = %+v, want %+v", got, tc.wantParts)
			}
			if got := reg.Arm(); got != tc.wantArm {
				t.Errorf("arm = %+v, want %+v", got, tc.wantArm)
			}
		})
	}
}

// TestBoardPartOutcomes pins board.State to capture_status's outcome words.
func TestBoardPartOutcomes(t *testing.T) {
	for state, want := range map[board.State]string{board.Up: ports.OutcomeUp, board.Skipped: ports.OutcomeSkipped, board.Failed: ports.OutcomeFailed} {
		if got := boardPart(board.Outcome{State: state}).Outcome; got != want {
			t.Errorf("%s → %q, want %q", state, got, want)
		}
	}
}

// TestBoardWatchersAreJoined: the sim board's LED goroutines run in the
// wait group startBoard is given, so once its context ends and the group
// is done, none is left running.
func TestBoardWatchersAreJoined(t *testing.T) {
	before := runtime.NumGoroutine()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var reg ports.Registry
	cfg := config.Default()
	if _, err := startBoard(ctx, &wg, cfg, &reg, slog.New(slog.NewTextHandler(io.Discard, nil))); err != nil {
		t.Fatal(err)
	}
	if started := runtime.NumGoroutine(); started <= before {
		t.Fatalf("%d goroutines before bring-up, %d after: the sim board's LED watchers did not start", before, started)
	}
	cancel()
	wg.Wait()
	// A goroutine that called Done may take a moment to be gone.
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if after := runtime.NumGoroutine(); after > before {
		t.Errorf("%d goroutines before bring-up, %d after its group is done: a watcher is not in the group", before, after)
	}
}
