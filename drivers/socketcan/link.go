package socketcan

import (
	"errors"
	"fmt"
)

// Link kinds (IFLA_INFO_KIND) as candevice reports them.
const (
	kindCAN   = "can"   // a real controller: bitrate and mode apply
	kindVCAN  = "vcan"  // virtual, no controller
	kindVXCAN = "vxcan" // virtual tunnel, no controller
)

// linkState is what netlink reports about a CAN interface.
type linkState struct {
	Kind       string
	Up         bool
	Bitrate    uint32
	ListenOnly bool
}

// link is the part of candevice.Device the driver uses, so configure is
// tested without netlink.
type link interface {
	state() (linkState, error)
	setDown() error
	setUp() error
	setBitrate(uint32) error
	setListenOnly(bool) error
}

// errNotListenOnly means listen-only was asked for and did not read back;
// the link was taken down.
var errNotListenOnly = errors.New("socketcan: listen-only did not take effect")

// configure brings l to o's bitrate and mode and up, changing only what
// differs, and reads the result back. It never leaves a link up in normal
// mode when listen-only was asked for. onDown, when not nil, runs just
// before a running link is taken down, so a capture socket open on it can
// expect the one ENETDOWN that follows.
func configure(l link, o Options, onDown func()) (linkState, error) {
	cur, err := l.state()
	if err != nil {
		return cur, err
	}
	if cur.Kind != kindCAN {
		// vcan and vxcan have no controller to set; there is no wire to
		// disturb.
		if !cur.Up {
			if err := l.setUp(); err != nil {
				return cur, fmt.Errorf("set %s link up: %w", cur.Kind, err)
			}
			cur.Up = true
		}
		return cur, nil
	}
	listenOnly := o.Mode == ModeListenOnly
	needRate := cur.Bitrate != uint32(o.Bitrate)
	needMode := cur.ListenOnly != listenOnly
	if (needRate || needMode) && cur.Up {
		// The kernel refuses bitrate and mode changes on a running link.
		if onDown != nil {
			onDown()
		}
		if err := l.setDown(); err != nil {
			return cur, fmt.Errorf("set link down: %w", err)
		}
	}
	if needRate {
		if err := l.setBitrate(uint32(o.Bitrate)); err != nil {
			return cur, fmt.Errorf("set bitrate %d: %w", o.Bitrate, err)
		}
	}
	if needMode {
		if err := l.setListenOnly(listenOnly); err != nil {
			return cur, fmt.Errorf("set %s: %w", o.Mode, err)
		}
	}
	if !cur.Up || needRate || needMode {
		if err := l.setUp(); err != nil {
			return cur, fmt.Errorf("set link up: %w", err)
		}
	}
	got, err := l.state()
	if err != nil {
		return got, err
	}
	if listenOnly && !got.ListenOnly {
		if derr := l.setDown(); derr != nil {
			return got, errors.Join(errNotListenOnly, fmt.Errorf("and the link could not be taken down: %w", derr))
		}
		return got, errNotListenOnly
	}
	if got.Bitrate != uint32(o.Bitrate) || !got.Up {
		return got, fmt.Errorf("link reads back bitrate %d up=%v, want %d up", got.Bitrate, got.Up, o.Bitrate)
	}
	return got, nil
}
