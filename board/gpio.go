package board

import (
	"fmt"

	"periph.io/x/conn/v3/gpio"
)

// Chip finds lines on the board's GPIO chips. OpenChips returns the real
// one on Linux; tests and the sim board use gpiotest pins.
type Chip interface {
	Line(l Line) (gpio.PinIO, error)
}

// Lines are the board's GPIO roles, opened. A missing line is nil.
type Lines struct {
	Status, Activity, Armed *LED
	Arm                     *ArmSwitch
	Confirm                 *Button
}

// OpenLines opens every line the profile names on chips.
func OpenLines(g GPIO, chips Chip) (Lines, error) {
	var ls Lines
	open := func(spec string) (gpio.PinIO, error) {
		if spec == "" {
			return nil, nil
		}
		l, err := ParseLine(spec)
		if err != nil {
			return nil, err
		}
		return chips.Line(l)
	}
	for _, led := range []struct {
		spec string
		dst  **LED
	}{{g.StatusLED, &ls.Status}, {g.ActivityLED, &ls.Activity}, {g.ArmedLED, &ls.Armed}} {
		p, err := open(led.spec)
		if err != nil {
			return ls, err
		}
		if p == nil {
			continue
		}
		if *led.dst, err = NewLED(p); err != nil {
			return ls, fmt.Errorf("led %s: %w", led.spec, err)
		}
	}
	if p, err := open(g.ArmInput); err != nil {
		return ls, err
	} else if p != nil {
		pull, err := pullOf(g.ArmPull)
		if err != nil {
			return ls, err
		}
		if ls.Arm, err = NewArmSwitch(p, ArmOptions{ActiveHigh: g.ArmActiveHigh, Pull: pull}); err != nil {
			return ls, err
		}
	}
	p, err := open(g.ConfirmInput)
	if err != nil || p == nil {
		return ls, err
	}
	pull, err := pullOf(g.ConfirmPull)
	if err != nil {
		return ls, err
	}
	ls.Confirm, err = NewButton(p, ButtonOptions{ActiveHigh: g.ConfirmActiveHigh, Pull: pull})
	return ls, err
}
