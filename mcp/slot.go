package mcp

import (
	"context"
	"sync"
)

type slotKey struct{}

// withSlot carries the release of a call's concurrency slot (limits.go)
// in its context, once-only, so a run that will wait on a person (a
// confirmation) can give the slot back before it waits.
func withSlot(ctx context.Context, release func()) (context.Context, func()) {
	once := sync.OnceFunc(release)
	return context.WithValue(ctx, slotKey{}, once), once
}

// releaseSlot gives the call's concurrency slot back early; the gate's
// own release after the call is then a no-op. Without a slot (stdio, no
// cap) it does nothing.
func releaseSlot(ctx context.Context) {
	if release, held := ctx.Value(slotKey{}).(func()); held {
		release()
	}
}
