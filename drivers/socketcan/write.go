package socketcan

import (
	"context"
	"fieldtap/drivers/wire"
	"fmt"
	"net"

	"go.einride.tech/can"
	"go.einride.tech/can/pkg/socketcan"
)

// ReasonTxWrite counts transmits the socket refused.
const ReasonTxWrite = "tx_write"

// WriteFrame sends one classic CAN frame on a second raw socket (the
// capture socket stays a reader): id carries wire.CANEFF for 29-bit;
// remote and error frames are refused. The port must be in normal mode,
// wanted and read back: a listen-only controller would drop the frame.
// The kernel loops a sent frame back to other sockets, so capture sees it.
func (s *Source) WriteFrame(ctx context.Context, id uint32, data []byte) error {
	f, err := toFrame(id, data)
	if err != nil {
		return err
	}
	s.txMu.Lock()
	defer s.txMu.Unlock()
	st := s.Status()
	if s.wantedMode() != ModeNormal || (st.LinkKind == kindCAN && st.ListenOnly) {
		return ErrListenOnly
	}
	if s.tx == nil {
		conn, err := s.dialTx(ctx)
		if err != nil {
			return fmt.Errorf("socketcan: open transmit socket on %s: %w", s.opts.Interface, err)
		}
		s.txConn, s.tx = conn, socketcan.NewTransmitter(conn)
	}
	if err := s.tx.TransmitFrame(ctx, f); err != nil {
		s.counters.Error(ReasonTxWrite)
		return fmt.Errorf("socketcan: transmit on %s: %w", s.opts.Interface, err)
	}
	s.update(func(st *Status) { st.Sent++ })
	return nil
}

// closeTx drops the transmit socket; the next WriteFrame opens a new one.
func (s *Source) closeTx() {
	s.txMu.Lock()
	defer s.txMu.Unlock()
	if s.txConn != nil {
		s.txConn.Close()
	}
	s.txConn, s.tx = nil, nil
}

// txState is the write side's socket, guarded by txMu.
type txState struct {
	txConn net.Conn
	tx     *socketcan.Transmitter
}

// toFrame checks and converts a frame for einride's transmitter. It is pure.
func toFrame(id uint32, data []byte) (can.Frame, error) {
	if id&(wire.CANRTR|wire.CANERR) != 0 {
		return can.Frame{}, fmt.Errorf("socketcan: id %#x: remote and error frames are not transmitted", id)
	}
	if len(data) > maxData {
		return can.Frame{}, fmt.Errorf("socketcan: %d data bytes, classic CAN carries at most %d", len(data), maxData)
	}
	f := can.Frame{ID: id &^ wire.CANEFF, Length: uint8(len(data)), IsExtended: id&wire.CANEFF != 0}
	copy(f.Data[:], data)
	if err := f.Validate(); err != nil {
		return can.Frame{}, fmt.Errorf("socketcan: %w", err)
	}
	return f, nil
}
