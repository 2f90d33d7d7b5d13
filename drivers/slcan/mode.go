package slcan

import (
	"context"
	"fmt"
)

// Mode is how the channel is open, named by the Lawicel command that
// opens it.
type Mode byte

// Modes.
const (
	// ListenOnly (L): no ACK, no error frames, no transmit. Every session
	// opens this way.
	ListenOnly Mode = 'L'
	// Normal (O): the adapter ACKs frames and can transmit. Only the
	// transmit gatekeeper asks for it, only while armed.
	Normal Mode = 'O'
)

func (m Mode) String() string {
	switch m {
	case ListenOnly:
		return "listen-only"
	case Normal:
		return "normal"
	}
	return fmt.Sprintf("mode(%q)", byte(m))
}

// SetMode closes the channel (C) and reopens it with L or O, under the
// write lock. If O is refused the channel is reopened listen-only and the
// refusal returned; if L is refused the channel stays closed (never
// normal). ListenOnly without a session is nil: a closed adapter sends
// nothing, and a new session always opens listen-only.
func (s *Source) SetMode(ctx context.Context, m Mode) error {
	if m != ListenOnly && m != Normal {
		return fmt.Errorf("slcan: %v: want ListenOnly or Normal", m)
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	ss, st := s.session()
	switch {
	case ss == nil && m == ListenOnly:
		return nil // nothing is open to transmit; the next session opens with L
	case ss == nil, !st.Open && m == Normal:
		return ErrClosed
	}
	if st.Open && st.ListenOnly == (m == ListenOnly) {
		return nil
	}
	if m == ListenOnly {
		// Listen-only is the safe state (a disarm asks for it within
		// 100 ms): it does not wait behind a transmit's late reply.
		ss.x.abandon()
	}
	cmd := func(c string) (string, error) {
		r, _, err := ss.x.exchange(ctx, ss.p, []byte(c+"\r"), s.opts.AckTimeout, nil)
		if err == nil {
			s.update(func(st *Status) { st.Replies[c] = r })
		}
		return r, err
	}
	// Whatever C answers, the channel is treated as closed from here.
	s.update(func(st *Status) { st.Open = false })
	if _, err := cmd("C"); err != nil {
		return fmt.Errorf("slcan: close %s: %w", s.opts.Device, err)
	}
	r, err := cmd(string(m))
	if err == nil && r != replyBell {
		s.update(func(st *Status) { st.Open, st.ListenOnly = true, m == ListenOnly })
		return nil
	}
	why := fmt.Errorf("slcan: %s refused %c (%s)", s.opts.Device, m, m)
	if err != nil {
		why = fmt.Errorf("slcan: open %s with %c: %w", s.opts.Device, m, err)
	}
	if m == ListenOnly {
		s.counters.Error(ReasonNotListen)
		return why
	}
	if r, err := cmd("L"); err == nil && r != replyBell {
		s.update(func(st *Status) { st.Open, st.ListenOnly = true, true })
	}
	return why
}

// session returns the open session and a status copy, or nil.
func (s *Source) session() (*session, Status) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cur, s.status
}

// setSession swaps the current session from old to new.
func (s *Source) setSession(old, new *session) {
	s.mu.Lock()
	if s.cur == old {
		s.cur = new
	}
	s.mu.Unlock()
}
