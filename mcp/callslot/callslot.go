package callslot

import (
	"context"
	"sync"
)

type slotKey struct{}

// With carries the release of a call's concurrency slot in ctx,
// once-only, and returns that once-only release for the caller's own
// deferred call.
func With(ctx context.Context, release func()) (context.Context, func()) {
	once := sync.OnceFunc(release)
	return context.WithValue(ctx, slotKey{}, once), once
}

// Release gives the call's concurrency slot back early; the front door's
// own release after the call is then a no-op. Without a slot (stdio, no
// cap) it does nothing.
func Release(ctx context.Context) {
	if release, held := ctx.Value(slotKey{}).(func()); held {
		release()
	}
}
