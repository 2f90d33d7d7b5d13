//go:build linux

package socketcan

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	"go.einride.tech/can/pkg/candevice"
	"go.einride.tech/can/pkg/socketcan"
	"golang.org/x/sys/unix"

	"fieldtap/drivers/capture"
	"fieldtap/drivers/devwatch"
)

// run1 is one session: configure the link in the wanted mode (SetMode
// may have changed it since start), open a raw socket that also receives
// error frames, read until an error or ctx ends. The ENETDOWN a SetMode
// bounce causes is expected: the socket stays bound and reads on.
func (s *Source) run1(ctx context.Context, out *capture.Handoff) error {
	iface := s.opts.Interface
	l, err := s.link()
	if err != nil {
		s.counters.Error(ReasonConfigure)
		return fmt.Errorf("socketcan: %s: %w", iface, err)
	}
	o := s.opts
	s.linkMu.Lock()
	o.Mode = s.wantedMode()
	got, err := configure(l, o, nil) // no capture socket is open yet
	s.linkMu.Unlock()
	s.update(func(st *Status) {
		st.LinkKind, st.Bitrate, st.ListenOnly = got.Kind, int(got.Bitrate), got.ListenOnly
	})
	if err != nil {
		s.counters.Error(ReasonConfigure)
		return fmt.Errorf("socketcan: %s: %w", iface, err)
	}
	// The index the socket binds to, for Probe: einride's dial looks the
	// name up again, so an interface replaced in between is seen gone
	// and the next session opens the new one.
	ifi, err := devwatch.Interface(iface)
	if err != nil {
		s.counters.Error(ReasonOpen)
		return fmt.Errorf("socketcan: %s: %w", iface, err)
	}
	conn, err := socketcan.DialContext(ctx, "can", iface, socketcan.WithReceiveErrorFrames())
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		s.counters.Error(ReasonOpen)
		return fmt.Errorf("socketcan: %s: %w", iface, err)
	}
	stop := context.AfterFunc(ctx, func() { conn.Close() }) // unblocks the read
	defer stop()
	defer conn.Close()
	s.update(func(st *Status) { st.Open = true })
	s.bound.Store(int32(ifi.Index))
	s.counters.Opened(time.Now())
	defer func() {
		s.bound.Store(0)
		s.counters.Closed()
	}()

	drops := newDropCounter(iface)
	r := reader{s: s, out: out}
	buf := make([]byte, rawFrameSize+1) // one spare byte shows a read that is not a can_frame
	var deadline time.Time
	for ctx.Err() == nil {
		if now := time.Now(); now.After(deadline) {
			s.counters.SetDrop(capture.DropKernel, drops.read())
			deadline = now.Add(s.opts.IdlePoll)
			if err := conn.SetReadDeadline(deadline); err != nil {
				return err
			}
		}
		n, err := conn.Read(buf)
		if errors.Is(err, os.ErrDeadlineExceeded) {
			continue
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if s.expectedDown(err) {
				continue
			}
			s.counters.Error(ReasonRead)
			return fmt.Errorf("socketcan: read %s: %w", iface, err)
		}
		r.frame(buf[:n], time.Now())
	}
	return nil
}

// openLink opens the interface's netlink handle.
func (s *Source) openLink() (link, error) {
	d, err := candevice.New(s.opts.Interface)
	if err != nil {
		return nil, err
	}
	return devLink{d}, nil
}

// dialTx opens the transmit socket: a plain raw socket, no error frames.
func (s *Source) dialTx(ctx context.Context) (net.Conn, error) {
	return socketcan.DialContext(ctx, "can", s.opts.Interface)
}

// devLink adapts candevice.Device to link.
type devLink struct{ d *candevice.Device }

func (l devLink) state() (linkState, error) {
	info, err := l.d.Info()
	if err != nil {
		return linkState{}, err
	}
	up, err := l.d.IsUp()
	if err != nil {
		return linkState{}, err
	}
	return linkState{
		Kind:       info.Type,
		Up:         up,
		Bitrate:    info.BitTiming.Bitrate,
		ListenOnly: info.CtrlMode.Flags&unix.CAN_CTRLMODE_LISTENONLY != 0,
	}, nil
}

func (l devLink) setDown() error              { return l.d.SetDown() }
func (l devLink) setUp() error                { return l.d.SetUp() }
func (l devLink) setBitrate(b uint32) error   { return l.d.SetBitrate(b) }
func (l devLink) setListenOnly(on bool) error { return l.d.SetListenOnlyMode(on) }
