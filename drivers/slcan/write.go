package slcan

import (
	"context"
	"errors"
	"fmt"
	"time"

	"fieldtap/drivers/wire"
)

// Transmit errors.
var (
	// ErrClosed: no session is open (the adapter is unplugged or
	// restarting).
	ErrClosed = errors.New("slcan: the channel is not open")
	// ErrListenOnly: the channel is open listen-only; SetMode(Normal)
	// first. Nothing was written.
	ErrListenOnly = errors.New("slcan: the channel is listen-only")
	// ErrRefused: the adapter answered the transmit with BELL (bus off,
	// buffer full, or a mode that cannot send).
	ErrRefused = errors.New("slcan: the adapter refused the frame (BELL)")
	// ErrNoAck: the frame was written and an adapter that acknowledges
	// commands did not answer it in time, so whether it left is unknown:
	// it may have gone out. WriteFrame returns it in a *NoAckError.
	ErrNoAck = errors.New("slcan: no acknowledgement for the frame")
)

// Reasons a transmit is counted in Stats().Errors.
const (
	ReasonTxRefused = "tx_refused" // the adapter answered a t/T with BELL
	ReasonTxNoAck   = "tx_no_ack"  // an acking adapter stayed silent after a t/T
	ReasonTxWrite   = "tx_write"   // the tty write failed
	// ReasonTxLateAck: the ack of a tx_no_ack transmit came within
	// LateReplyWait: the adapter took the frame after all.
	ReasonTxLateAck = "tx_late_ack"
	// ReasonTxLateRefused: a BELL came instead: it did not.
	ReasonTxLateRefused = "tx_late_refused"
)

// NoAckError is WriteFrame's error when the frame was written and its
// reply did not come within AckTimeout, or the wait ended first (ctx, the
// session): the frame may have gone out. The port then writes nothing
// else for LateReplyWait, listen-only excepted, so a reply that comes is
// this frame's; LateReply waits for it.
type NoAckError struct {
	Timeout time.Duration // the AckTimeout waited
	cause   error         // why the wait ended early; nil after Timeout
	late    *owed
}

func (e *NoAckError) Error() string {
	if e.cause != nil {
		return fmt.Sprintf("slcan: the wait for the frame's acknowledgement ended (%v)", e.cause)
	}
	return fmt.Sprintf("slcan: no acknowledgement for the frame within %v", e.Timeout)
}

// Unwrap is ErrNoAck, and why the wait ended early.
func (e *NoAckError) Unwrap() []error {
	if e.cause != nil {
		return []error{ErrNoAck, e.cause}
	}
	return []error{ErrNoAck}
}

// MayHaveSent reports that the frame may be on the bus although the
// adapter did not say so.
func (e *NoAckError) MayHaveSent() bool { return true }

// LateReply waits until the adapter answers the frame after all, the
// LateReplyWait passes, the channel is closed or its session ends, or
// ctx ends. acked: the adapter acknowledged the frame (took it for the
// bus). A non-zero at with acked false: it refused it (BELL). A zero at:
// no answer came.
func (e *NoAckError) LateReply(ctx context.Context) (acked bool, at time.Time) {
	select {
	case <-e.late.resolved:
		return e.late.reply == replyAck, e.late.at
	case <-ctx.Done():
		return false, time.Time{}
	}
}

// WriteFrame sends one classic CAN frame: id with wire.CANEFF for a
// 29-bit id (T), without for 11-bit (t); remote and error frames are not
// sent. It holds the write lock until the adapter answers: \r, z or Z is
// sent, BELL is ErrRefused, silence is fine only on an adapter that never
// acknowledges; on one that does it is a *NoAckError, and the reply is
// still waited for (NoAckError.LateReply), and counted when it comes. The
// channel must be open in Normal mode.
func (s *Source) WriteFrame(ctx context.Context, id uint32, data []byte) error {
	line, err := formatFrame(id, data)
	if err != nil {
		return err
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	ss, st := s.session()
	switch {
	case ss == nil || !st.Open:
		return ErrClosed
	case st.ListenOnly:
		return ErrListenOnly
	}
	var d *debt
	if ss.acks {
		d = &debt{wait: s.opts.LateReplyWait, note: s.lateReply}
	}
	r, late, err := ss.x.exchange(ctx, ss.p, line, s.opts.AckTimeout, d)
	switch {
	case late != nil:
		s.counters.Error(ReasonTxNoAck)
		return &NoAckError{Timeout: s.opts.AckTimeout, cause: err, late: late}
	case err != nil:
		s.counters.Error(ReasonTxWrite)
		return fmt.Errorf("slcan: transmit on %s: %w", s.opts.Device, err)
	case r == replyBell:
		s.counters.Error(ReasonTxRefused)
		s.update(func(st *Status) { st.Refused++ })
		return ErrRefused
	}
	s.update(func(st *Status) { st.Sent++ })
	return nil
}

// lateReply counts the reply to a transmit that came after WriteFrame
// gave up on it.
func (s *Source) lateReply(r string) {
	switch r {
	case replyAck:
		s.counters.Error(ReasonTxLateAck)
		s.update(func(st *Status) { st.Sent++ })
	case replyBell:
		s.counters.Error(ReasonTxLateRefused)
		s.update(func(st *Status) { st.Refused++ })
	}
}

// formatFrame renders a transmit line with its CR: t + 3 id digits or
// T + 8, the DLC, two hex digits per byte. It is pure.
func formatFrame(id uint32, data []byte) ([]byte, error) {
	if id&(wire.CANRTR|wire.CANERR) != 0 {
		return nil, fmt.Errorf("slcan: id %#x: remote and error frames are not transmitted", id)
	}
	if len(data) > maxData {
		return nil, fmt.Errorf("slcan: %d data bytes, classic CAN carries at most %d", len(data), maxData)
	}
	raw := id &^ wire.CANEFF
	digits, kind := stdIDDigits, byte('t')
	if id&wire.CANEFF != 0 {
		digits, kind = extIDDigits, 'T' // bits above 29 are the RTR/ERR flags, refused above
	} else if raw > wire.CANSFFMask {
		return nil, fmt.Errorf("slcan: 11-bit id %#x out of range (set CANEFF for 29-bit)", raw)
	}
	b := make([]byte, 0, 2+digits+2*len(data)+1)
	b = append(b, kind)
	b = appendHex(b, raw, digits)
	b = append(b, byte('0'+len(data)))
	for _, d := range data {
		b = appendHex(b, uint32(d), 2)
	}
	return append(b, cr), nil
}

func appendHex(b []byte, v uint32, digits int) []byte {
	const hex = "0123456789ABCDEF"
	for i := digits - 1; i >= 0; i-- {
		b = append(b, hex[v>>(4*uint(i))&0xF])
	}
	return b
}
