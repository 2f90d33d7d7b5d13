package socketcan

import (
	"context"
	"errors"
	"fmt"
	"syscall"
)

// ReasonModeBounce counts the ENETDOWN a capture socket sees when SetMode
// takes the link down to change the controller mode. It is expected, so
// the session keeps reading instead of restarting; it is counted so the
// gap in capture (frames while the link was down are lost) is visible.
const ReasonModeBounce = "mode_bounce"

// ErrListenOnly: the port is not in normal mode; SetMode(ModeNormal)
// first. Nothing was written.
var ErrListenOnly = errors.New("socketcan: the port is listen-only")

// wantedMode is the mode every session configures: opts.Mode until
// SetMode changes it.
func (s *Source) wantedMode() Mode {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.wanted
}

// SetMode switches the controller between listen-only and normal while
// capture runs. It records the wanted mode first, so a session that
// restarts meanwhile configures the new one, then reconfigures the link
// (down, mode, up, read back) under the same lock as run1's configure.
// The capture socket sees one ENETDOWN per bounce; run1 tolerates it.
// Leaving normal also closes the transmit socket. On a virtual link there
// is no controller: only the wanted mode changes.
func (s *Source) SetMode(ctx context.Context, m Mode) error {
	if m != ModeListenOnly && m != ModeNormal {
		return fmt.Errorf("socketcan: mode %q: want %q or %q", m, ModeListenOnly, ModeNormal)
	}
	s.linkMu.Lock()
	defer s.linkMu.Unlock()
	s.mu.Lock()
	s.wanted = m
	s.mu.Unlock()
	if m == ModeListenOnly {
		s.closeTx()
	}
	err := s.apply(m)
	if err != nil && m == ModeNormal {
		// Never leave normal wanted after a failure: a session restart
		// would configure it. Back to listen-only, as far as it goes.
		s.mu.Lock()
		s.wanted = ModeListenOnly
		s.mu.Unlock()
		if lerr := s.apply(ModeListenOnly); lerr != nil {
			err = errors.Join(err, fmt.Errorf("and back to listen-only: %w", lerr))
		}
	}
	if err != nil {
		return err
	}
	return ctx.Err()
}

// apply configures the link in mode m; the caller holds linkMu.
func (s *Source) apply(m Mode) error {
	l, err := s.link()
	if err != nil {
		return fmt.Errorf("socketcan: %s: %w", s.opts.Interface, err)
	}
	o := s.opts
	o.Mode = m
	got, err := configure(l, o, func() { s.downs.Add(1) })
	s.update(func(st *Status) {
		st.LinkKind, st.Bitrate, st.ListenOnly = got.Kind, int(got.Bitrate), got.ListenOnly
	})
	if err != nil {
		s.counters.Error(ReasonConfigure)
		return fmt.Errorf("socketcan: %s: set %s: %w", s.opts.Interface, m, err)
	}
	return nil
}

// expectedDown reports whether err is an ENETDOWN that SetMode announced,
// and consumes the announcement: each bounce excuses one read error.
func (s *Source) expectedDown(err error) bool {
	if !errors.Is(err, syscall.ENETDOWN) {
		return false
	}
	for {
		n := s.downs.Load()
		if n <= 0 {
			return false
		}
		if s.downs.CompareAndSwap(n, n-1) {
			s.counters.Error(ReasonModeBounce)
			return true
		}
	}
}

// link opens the netlink handle; tests replace it with a fake through
// linkFn.
func (s *Source) link() (link, error) {
	if s.linkFn != nil {
		return s.linkFn()
	}
	return s.openLink()
}
