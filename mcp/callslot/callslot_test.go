package callslot

import (
	"context"
	"testing"
)

// TestReleaseGivesTheSlotBackOnce: a tool's early Release and the front
// door's own release after the call give the slot back once between
// them, and a call without a slot releases nothing.
func TestReleaseGivesTheSlotBackOnce(t *testing.T) {
	released := 0
	ctx, release := With(context.Background(), func() { released++ })
	Release(ctx)
	Release(ctx)
	release()
	if released != 1 {
		t.Errorf("slot released %d times, want once", released)
	}
	Release(context.Background()) // no slot: nothing to do, no panic
}
