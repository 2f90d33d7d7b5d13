//go:build !linux

package ethernet

import (
	"context"
	"fmt"

	"fieldtap/drivers/capture"
)

// Run fails: AF_PACKET exists only on Linux, and no retry changes that.
func (s *Source) Run(ctx context.Context, out *capture.Handoff) error {
	s.counters.Error("open")
	return fmt.Errorf("ethernet: AF_PACKET capture needs Linux: %w", capture.ErrUnsupported)
}
