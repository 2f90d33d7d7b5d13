package j1708

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Transmit errors. Nothing was written unless the error says so.
var (
	// ErrClosed: the serial port is not open (not started, or reopening).
	ErrClosed = errors.New("j1708: the port is not open")
	// ErrListenOnly: the port is not in transmit mode; SetTransmit(true)
	// first (the gatekeeper does, only while armed).
	ErrListenOnly = errors.New("j1708: the port is listen-only")
	// ErrBusBusy: the line never stayed idle for one bus access time
	// within maxAccessWait.
	ErrBusBusy = errors.New("j1708: no idle window on the bus")
	// ErrNoEcho: the message was written but did not all come back, so
	// whether it reached the bus is unknown. Not retried: it may have
	// (MayHaveSent).
	ErrNoEcho error = mayHaveSent("j1708: the transceiver did not echo the whole message")
	// ErrCollisions: every one of MaxAttempts sends collided.
	ErrCollisions = errors.New("j1708: the message collided on every attempt")
)

// mayHaveSent is a transmit error after which the message may be on the
// bus: the transmit gatekeeper reports the run uncertain, not refused.
type mayHaveSent string

func (e mayHaveSent) Error() string { return string(e) }

// MayHaveSent reports that the message may be on the bus.
func (mayHaveSent) MayHaveSent() bool { return true }

// Reasons a transmit is counted in Stats().Errors.
const (
	ReasonTxCollision = "tx_collision" // a read-back byte differed
	ReasonTxNoEcho    = "tx_no_echo"   // the read-back stopped short
	ReasonTxBusy      = "tx_bus_busy"  // no access window
	ReasonTxWrite     = "tx_write"     // the serial write failed
)

// TxStatus counts the write side.
type TxStatus struct {
	Transmit   bool   `json:"transmit"` // in transmit mode now
	Sent       uint64 `json:"sent"`     // messages read back intact
	Collisions uint64 `json:"collisions"`
	Retries    uint64 `json:"retries"` // sends after a collision
	GaveUp     uint64 `json:"gave_up"` // messages that collided MaxAttempts times
	NoEcho     uint64 `json:"no_echo"`
	Busy       uint64 `json:"bus_busy"`
}

// TxStatus returns a copy of the write-side counters.
func (s *Source) TxStatus() TxStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.tx
	st.Transmit = s.transmit.Load()
	return st
}

func (s *Source) txUpdate(f func(*TxStatus)) {
	s.mu.Lock()
	f(&s.tx)
	s.mu.Unlock()
}

// SetTransmit switches the port between listen-only (the default, and
// the state after every reopen) and transmit. J1708 has no controller
// mode: listen-only means WriteFrame refuses. Transmit needs an open port.
func (s *Source) SetTransmit(on bool) error {
	if on && s.currentLine() == nil {
		return ErrClosed
	}
	s.transmit.Store(on)
	return nil
}

// WriteFrame sends one whole J1708 message (MID, data, checksum; id is
// ignored, J1708 has none) by the bus access rule: wait for the line to
// be idle for AccessTime at the configured priority, write the message in
// one write so its bytes follow back to back, and read it back. A
// differing byte is a collision: counted, then retried after the access
// time plus collisionBackoff per collision so far, at most MaxAttempts
// sends. Userspace cannot stop a UART after the MID as the standard asks,
// so a collided message goes out whole and every receiver drops it by
// its checksum.
func (s *Source) WriteFrame(ctx context.Context, _ uint32, msg []byte) error {
	if err := checkMessage(msg); err != nil {
		return err
	}
	access, err := AccessTime(s.opts.Priority, s.opts.Baud)
	if err != nil {
		return err
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	for attempt := 1; ; attempt++ {
		ln := s.currentLine()
		if ln == nil {
			return ErrClosed
		}
		if err := s.awaitIdle(ctx, ln, access+time.Duration(attempt-1)*collisionBackoff(s.opts.Baud)); err != nil {
			return err
		}
		// Checked after the wait: a disarm while waiting writes nothing.
		if !s.transmit.Load() {
			return ErrListenOnly
		}
		if attempt > 1 {
			s.txUpdate(func(st *TxStatus) { st.Retries++ })
		}
		got, err := s.sendOnce(ctx, ln, msg)
		if err != nil {
			return err
		}
		switch v, at := judgeEcho(msg, got); v {
		case echoOK:
			s.txUpdate(func(st *TxStatus) { st.Sent++ })
			return nil
		case echoShort:
			s.counters.Error(ReasonTxNoEcho)
			s.txUpdate(func(st *TxStatus) { st.NoEcho++ })
			return fmt.Errorf("%w: %d of %d bytes came back", ErrNoEcho, at, len(msg))
		}
		s.counters.Error(ReasonTxCollision)
		s.txUpdate(func(st *TxStatus) { st.Collisions++ })
		if attempt == MaxAttempts {
			s.txUpdate(func(st *TxStatus) { st.GaveUp++ })
			return fmt.Errorf("%w (%d attempts)", ErrCollisions, MaxAttempts)
		}
	}
}

// awaitIdle returns once the line has been quiet for access, judged from
// the capture loop's receive times.
func (s *Source) awaitIdle(ctx context.Context, ln *line, access time.Duration) error {
	start := time.Now()
	for {
		now := time.Now()
		left := idleLeft(now, ln.last(), access)
		if left <= 0 {
			return nil
		}
		if now.Sub(start) > maxAccessWait {
			s.counters.Error(ReasonTxBusy)
			s.txUpdate(func(st *TxStatus) { st.Busy++ })
			return fmt.Errorf("%w for %v (access time %v)", ErrBusBusy, maxAccessWait, access)
		}
		t := time.NewTimer(left)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
	}
}

// sendOnce writes msg and returns what was read back: all of it, or what
// came within its wire time plus the echo slack.
func (s *Source) sendOnce(ctx context.Context, ln *line, msg []byte) ([]byte, error) {
	e := newEcho(len(msg))
	ln.echo.Store(e) // registered before the write: a fast echo is not missed
	defer ln.echo.Store(nil)
	if _, err := ln.w.Write(msg); err != nil {
		s.counters.Error(ReasonTxWrite)
		return nil, fmt.Errorf("j1708: write %s: %w", s.opts.Device, err)
	}
	t := time.NewTimer(time.Duration(len(msg))*s.opts.byteTime() + s.opts.EchoSlack)
	defer t.Stop()
	select {
	case <-e.full:
	case <-t.C:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return e.bytes(), nil
}

func (s *Source) currentLine() *line {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.line
}

// setLine publishes the open port (nil when it closes). A new line always
// starts listen-only.
func (s *Source) setLine(l *line) {
	s.mu.Lock()
	s.line = l
	s.mu.Unlock()
	s.transmit.Store(false)
}
