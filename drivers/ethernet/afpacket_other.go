//go:build !linux

package ethernet

import (
	"context"
	"errors"

	"fieldtap/drivers/capture"
)

// Run fails: AF_PACKET exists only on Linux.
func (s *Source) Run(ctx context.Context, out *capture.Handoff) error {
	s.counters.Error("open")
	return errors.New("ethernet: AF_PACKET capture needs Linux")
}
