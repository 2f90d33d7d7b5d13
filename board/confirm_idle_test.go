package board

import (
	"context"
	"path/filepath"
	"testing"
	"time"
)

// pressUntil presses the file until seen reports the press arrived: a
// press before a wait read its baseline is (rightly) not counted.
func pressUntil(t *testing.T, path string, seen <-chan time.Time) time.Time {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; {
		if err := PressFile(path); err != nil {
			t.Fatal(err)
		}
		select {
		case at := <-seen:
			return at
		case <-time.After(ButtonPoll):
			if time.Now().After(deadline) {
				t.Fatal("no press was seen")
			}
		}
	}
}

// TestConfirmIdlePressesMark: with no plan waiting, a press is handed to
// the idle watcher (a mark); a plan's wait takes the button over, and the
// press made for it is the plan's alone; after it, presses mark again.
func TestConfirmIdlePressesMark(t *testing.T) {
	path := filepath.Join(t.TempDir(), "confirm")
	c := NewFileConfirm(path, nil)
	ctx, cancel := context.WithCancel(context.Background())
	marks := make(chan time.Time, 64)
	done := make(chan struct{})
	go func() { defer close(done); c.WatchIdle(ctx, func(at time.Time) { marks <- at }) }()
	defer func() { cancel(); <-done }()

	pressUntil(t, path, marks)

	armed := make(chan struct{})
	confirmed := make(chan time.Time, 1)
	go func() {
		at, err := c.AwaitPress(ctx, []int{1}, func() { close(armed) })
		if err != nil {
			t.Error(err)
		}
		confirmed <- at
	}()
	<-armed
	for len(marks) > 0 { // presses of the loop above seen late
		<-marks
	}
	planPress := pressUntil(t, path, confirmed)
	if len(marks) != 0 {
		t.Fatalf("the plan's press also made a mark: %v", <-marks)
	}
	if at := pressUntil(t, path, marks); at.Before(planPress) {
		t.Errorf("mark at %v is before the plan's press at %v", at, planPress)
	}
}
