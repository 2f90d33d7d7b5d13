//go:build !linux

package socketcan

import (
	"context"

	"fieldtap/drivers/capture"
)

// run1 has no SocketCAN to open here.
func (s *Source) run1(context.Context, *capture.Handoff) error { return ErrNotLinux }
