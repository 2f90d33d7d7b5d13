package devwatch

import (
	"errors"

	"fieldtap/drivers/capture"
)

// ErrNoDevice: no interface of that name, or nothing at that path.
var ErrNoDevice = errors.New("no such device")

// Link is a network interface as the kernel shows it.
type Link struct {
	Index int
	// Up is IFF_UP: the interface is set up.
	Up bool
	// Running is IFF_RUNNING: up and its carrier present (operstate up);
	// a SPAN cable pulled at the switch, a veth whose peer is down or a
	// CAN controller that went bus-off has none.
	Running bool
}

// InterfaceMedium is what the interface called name is for a capture
// whose socket is bound to index bound, or for none when bound is 0:
// gone when it is missing or has another index, down when it is not set
// up or has no carrier, up otherwise; unknown when it cannot be looked
// at.
func InterfaceMedium(name string, bound int) capture.Medium {
	l, err := Interface(name)
	switch {
	case errors.Is(err, ErrNoDevice):
		return capture.MediumGone
	case err != nil:
		return capture.MediumUnknown
	case bound != 0 && l.Index != bound:
		return capture.MediumGone
	case !l.Up || !l.Running:
		return capture.MediumDown
	}
	return capture.MediumUp
}

// NodeMedium is what the device node at path (symbolic links followed,
// as udev's /dev/serial/by-id names are) is for a capture that opened
// device number opened, or for none when opened is 0: gone when nothing
// is there or another device is, up otherwise. A tty has no link state
// to tell: down is never reported.
func NodeMedium(path string, opened uint64) capture.Medium {
	dev, err := Node(path)
	switch {
	case errors.Is(err, ErrNoDevice):
		return capture.MediumGone
	case err != nil:
		return capture.MediumUnknown
	case opened != 0 && dev != opened:
		return capture.MediumGone
	}
	return capture.MediumUp
}
