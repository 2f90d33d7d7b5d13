package board

import (
	"fmt"
	"path/filepath"

	"periph.io/x/conn/v3/driver/driverreg"
	"periph.io/x/conn/v3/gpio"
	"periph.io/x/host/v3/gpioioctl"
)

// ioctlChips is the kernel's GPIO character devices through periph's
// gpioioctl driver.
type ioctlChips struct{}

// OpenChips initialises periph's gpioioctl driver once. It is the only
// place that touches periph's process-wide registry.
func OpenChips() (Chip, error) {
	if _, err := driverreg.Init(); err != nil {
		return nil, fmt.Errorf("gpio: %w", err)
	}
	if len(gpioioctl.Chips) == 0 {
		return nil, fmt.Errorf("gpio: no /dev/gpiochip* (is CONFIG_GPIO_CDEV set?)")
	}
	return ioctlChips{}, nil
}

func (ioctlChips) Line(l Line) (gpio.PinIO, error) {
	for _, c := range gpioioctl.Chips {
		if c.Name() == l.Chip || c.Label() == l.Chip || filepath.Base(c.Path()) == l.Chip {
			if l.Offset >= c.LineCount() {
				return nil, fmt.Errorf("gpio %s: chip has %d lines", l, c.LineCount())
			}
			return c.ByNumber(l.Offset), nil
		}
	}
	return nil, fmt.Errorf("gpio %s: no such chip", l)
}
