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
	// The index the socket binds to, kept for Probe: an interface
	// replaced after this is seen gone and the next session opens the
	// new one.
	ifi, err := devwatch.Interface(iface)
	if err != nil {
		s.counters.Error(ReasonOpen)
		return fmt.Errorf("socketcan: %s: %w", iface, err)
	}
	conn, err := dialCapture(ifi.Index)
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
	buf := make([]byte, rawFDFrameSize+1) // one spare byte shows a read that is no frame
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

// dialCapture opens the capture socket: a raw CAN socket bound to the
// interface with index ifindex that receives every error frame and, with
// CAN_RAW_FD_FRAMES, CAN FD frames as struct canfd_frame beside classic
// ones as struct can_frame. einride's dial cannot set that option. The
// socket is non-blocking, so the returned file's reads take deadlines.
func dialCapture(ifindex int) (*os.File, error) {
	fd, err := unix.Socket(unix.AF_CAN, unix.SOCK_RAW|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, unix.CAN_RAW)
	if err != nil {
		return nil, fmt.Errorf("socket: %w", err)
	}
	for _, o := range []struct {
		name  string
		opt   int
		value int
	}{
		{"error filter", unix.CAN_RAW_ERR_FILTER, unix.CAN_ERR_MASK},
		{"CAN_RAW_FD_FRAMES", unix.CAN_RAW_FD_FRAMES, 1},
	} {
		if err := unix.SetsockoptInt(fd, unix.SOL_CAN_RAW, o.opt, o.value); err != nil {
			unix.Close(fd)
			return nil, fmt.Errorf("set %s: %w", o.name, err)
		}
	}
	if err := unix.Bind(fd, &unix.SockaddrCAN{Ifindex: ifindex}); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("bind: %w", err)
	}
	return os.NewFile(uintptr(fd), "can"), nil
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
