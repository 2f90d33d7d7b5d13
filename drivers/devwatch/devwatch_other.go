//go:build !linux

package devwatch

import (
	"context"
	"fmt"

	"fieldtap/drivers/capture"
)

// Interface needs Linux's interface ioctls.
func Interface(name string) (Link, error) {
	return Link{}, fmt.Errorf("devwatch: interface %s: %w", name, capture.ErrUnsupported)
}

// Node needs Linux's stat.
func Node(path string) (uint64, error) {
	return 0, fmt.Errorf("devwatch: %s: %w", path, capture.ErrUnsupported)
}

// WatchLinks needs rtnetlink.
func WatchLinks(context.Context, func()) error {
	return fmt.Errorf("devwatch: link events: %w", capture.ErrUnsupported)
}
