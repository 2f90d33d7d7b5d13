//go:build !linux

package socketcan

import (
	"context"
	"net"

	"fieldtap/drivers/capture"
)

// run1 has no SocketCAN to open here.
func (s *Source) run1(context.Context, *capture.Handoff) error { return ErrNotLinux }

func (s *Source) openLink() (link, error) { return nil, ErrNotLinux }

func (s *Source) dialTx(context.Context) (net.Conn, error) { return nil, ErrNotLinux }
