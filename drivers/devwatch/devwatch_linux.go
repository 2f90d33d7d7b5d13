//go:build linux

package devwatch

import (
	"context"
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// linkEventBuffer is one read of the rtnetlink socket. Only that an
// event came matters, not what it says, so a longer message may be cut
// (the kernel drops the rest of that one message).
const linkEventBuffer = 4096

// Interface looks name up with two ioctls on a throwaway socket: its
// index (ErrNoDevice when there is none) and its flags.
func Interface(name string) (Link, error) {
	// Any socket reaches the interface ioctls; AF_UNIX exists on every
	// kernel, with or without IPv4.
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return Link{}, fmt.Errorf("devwatch: %s: socket: %w", name, err)
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq(name)
	if err != nil {
		return Link{}, fmt.Errorf("devwatch: %s: %w", name, err)
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFINDEX, ifr); err != nil {
		if errors.Is(err, unix.ENODEV) {
			return Link{}, fmt.Errorf("devwatch: interface %s: %w", name, ErrNoDevice)
		}
		return Link{}, fmt.Errorf("devwatch: interface %s: index: %w", name, err)
	}
	l := Link{Index: int(ifr.Uint32())}
	ifr, _ = unix.NewIfreq(name) // the name was accepted above
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		if errors.Is(err, unix.ENODEV) {
			return Link{}, fmt.Errorf("devwatch: interface %s: %w", name, ErrNoDevice)
		}
		return Link{}, fmt.Errorf("devwatch: interface %s: flags: %w", name, err)
	}
	flags := ifr.Uint16()
	l.Up, l.Running = flags&unix.IFF_UP != 0, flags&unix.IFF_RUNNING != 0
	return l, nil
}

// Node returns the device number of the node at path, following
// symbolic links (0 for a file that is no device): ErrNoDevice when
// nothing is there, or the link points nowhere.
func Node(path string) (uint64, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) {
			return 0, fmt.Errorf("devwatch: %s: %w", path, ErrNoDevice)
		}
		return 0, fmt.Errorf("devwatch: %s: %w", path, err)
	}
	return uint64(st.Rdev), nil // uint32 on some ports (mips)
}

// WatchLinks calls changed each time the kernel announces that a network
// interface of this namespace was added, removed or changed state
// (RTMGRP_LINK), and when its queue of announcements overflowed, since
// any of them may have been lost. It opens its socket before it returns
// or blocks, so a caller on a thread in another namespace watches that
// one; then it reads until ctx ends and returns nil.
func WatchLinks(ctx context.Context, changed func()) error {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, unix.NETLINK_ROUTE)
	if err != nil {
		return fmt.Errorf("devwatch: rtnetlink socket: %w", err)
	}
	if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK, Groups: unix.RTMGRP_LINK}); err != nil {
		unix.Close(fd)
		return fmt.Errorf("devwatch: rtnetlink link events: %w", err)
	}
	// In the runtime's poller, so closing it ends a pending read.
	f := os.NewFile(uintptr(fd), "rtnetlink")
	stop := context.AfterFunc(ctx, func() { f.Close() })
	defer func() {
		if stop() {
			f.Close()
		}
	}()
	buf := make([]byte, linkEventBuffer)
	for {
		_, err := f.Read(buf)
		switch {
		case ctx.Err() != nil:
			return nil
		case errors.Is(err, unix.ENOBUFS):
			changed()
		case err != nil:
			return fmt.Errorf("devwatch: rtnetlink link events: %w", err)
		default:
			changed()
		}
	}
}
