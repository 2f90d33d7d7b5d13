package slcan

import (
	"context"
	"errors"
	"fieldtap/drivers/wire"
	"fmt"
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
	// ErrNoAck: an adapter that acknowledges commands stayed silent after
	// a transmit, so whether the frame left is unknown.
	ErrNoAck = errors.New("slcan: no acknowledgement for the frame")
)

// Reasons a transmit is counted in Stats().Errors.
const (
	ReasonTxRefused = "tx_refused" // the adapter answered a t/T with BELL
	ReasonTxNoAck   = "tx_no_ack"  // an acking adapter stayed silent after a t/T
	ReasonTxWrite   = "tx_write"   // the tty write failed
)

// WriteFrame sends one classic CAN frame: id with wire.CANEFF for a
// 29-bit id (T), without for 11-bit (t); remote and error frames are not
// sent. It holds the write lock until the adapter answers: \r, z or Z is
// sent, BELL is ErrRefused, silence is fine only on an adapter that never
// acknowledges. The channel must be open in Normal mode.
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
	r, err := ss.x.exchange(ctx, ss.p, line, s.opts.AckTimeout)
	switch {
	case err != nil:
		s.counters.Error(ReasonTxWrite)
		return fmt.Errorf("slcan: transmit on %s: %w", s.opts.Device, err)
	case r == replyBell:
		s.counters.Error(ReasonTxRefused)
		s.update(func(st *Status) { st.Refused++ })
		return ErrRefused
	case r == replyNone && ss.acks:
		s.counters.Error(ReasonTxNoAck)
		return ErrNoAck
	}
	s.update(func(st *Status) { st.Sent++ })
	return nil
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
