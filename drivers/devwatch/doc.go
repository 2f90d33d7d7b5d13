// Package devwatch looks at capture devices from outside the capture: a
// network interface by name (its index, whether it is set up, whether it
// has a carrier) or a device node by path (whether it is there, which
// device it is), and listens for the kernel's rtnetlink link events so a
// change is looked at when it happens rather than at the next tick.
//
// Drivers use it to answer capture.Prober; the daemon's watchdog uses
// WatchLinks. Nothing here reads or writes a capture: a probe is an
// ioctl or a stat, cheap enough to run every second per port.
package devwatch
